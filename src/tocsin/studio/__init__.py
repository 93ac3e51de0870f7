"""tocsin.studio."""

from __future__ import annotations
