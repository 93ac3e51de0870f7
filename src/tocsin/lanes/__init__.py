"""tocsin.lanes."""

from __future__ import annotations
