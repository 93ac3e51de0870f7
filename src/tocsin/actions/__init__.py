"""tocsin.actions."""

from __future__ import annotations
