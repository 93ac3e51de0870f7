"""tocsin.core.cron."""

from __future__ import annotations
