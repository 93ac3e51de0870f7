"""tocsin.cli."""

from __future__ import annotations
