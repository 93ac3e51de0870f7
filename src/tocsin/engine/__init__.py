"""tocsin.engine."""

from __future__ import annotations
