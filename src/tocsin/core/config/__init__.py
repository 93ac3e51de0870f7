"""Trigger and action configuration: validation, predicates, templates, action checks, limits,
adoption, receipts."""

from __future__ import annotations
