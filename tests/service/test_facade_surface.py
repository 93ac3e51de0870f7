"""The facade documents itself: every public method and namespace of ``Tocsin`` carries its own
docstring (``help(Tocsin.create_table)`` reads the facade, nothing is copied in at import)."""

from __future__ import annotations

import inspect

import pytest

from tocsin import Tocsin

PUBLIC = sorted(name for name in vars(Tocsin) if not name.startswith("_"))


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_member_is_documented(name: str) -> None:
    member = inspect.getattr_static(Tocsin, name)
    target = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
    assert inspect.getdoc(target), f"Tocsin.{name} has no docstring"


def test_documented_namespaces_are_reached_from_the_facade() -> None:
    for name in ("schedules", "lanes", "execution"):
        assert isinstance(inspect.getattr_static(Tocsin, name), property)
