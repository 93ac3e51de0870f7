"""tocsin.runs."""

from __future__ import annotations
