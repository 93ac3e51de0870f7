"""tocsin.api."""

from __future__ import annotations
