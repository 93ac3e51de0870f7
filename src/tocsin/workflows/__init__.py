"""tocsin.workflows."""

from __future__ import annotations
