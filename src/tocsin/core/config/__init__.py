"""Trigger and action configuration: validation, predicates, templates, action checks, limits,
adoption, receipts."""
