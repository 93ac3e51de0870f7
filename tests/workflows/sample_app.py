"""A user's app module for ``--app`` tests: ``workflows.sample_app:WORKFLOWS``."""

from __future__ import annotations

from .helpers import daily, every_minute

WORKFLOWS = [daily(), every_minute()]
NOT_WORKFLOWS = 42
