"""A test's settings the public way: ``@with_settings(name=value)`` gives the ``settings`` fixture
(and so the ``tocsin`` fixture) those fields, as the matching ``TOCSIN_*`` variables would."""

from __future__ import annotations

from typing import Any

import pytest


def with_settings(**fields: Any) -> pytest.MarkDecorator:
    """``tests/conftest.py``'s ``settings`` with ``fields`` replaced (``dataclasses.replace``)."""
    given = ", ".join(f"{name}={value}" for name, value in fields.items())
    return pytest.mark.parametrize("settings", [fields], indirect=True, ids=[given])
