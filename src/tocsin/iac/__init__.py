"""tocsin.iac."""

from __future__ import annotations
