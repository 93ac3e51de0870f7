"""tocsin.api.routes."""

from __future__ import annotations
