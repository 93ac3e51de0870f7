"""The facade's public API is frozen: every public name of ``tocsin.Tocsin`` as it stood before
the facade was composed from services still exists, of the same kind, with an identical
signature (parameters, defaults, keyword-only markers, annotations).

``facade_api.json`` was captured from the mixin-built class before the change.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tocsin import Tocsin
from tocsin.settings import Settings
from tocsin.store.tx import Store

FROZEN: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "facade_api.json").read_text(encoding="utf-8")
)


def describe(name: str) -> dict[str, Any]:
    raw = inspect.getattr_static(Tocsin, name)
    if isinstance(raw, property):
        assert raw.fget is not None
        return {"kind": "property", "signature": str(inspect.signature(raw.fget))}
    for kind, wrapper in (("classmethod", classmethod), ("staticmethod", staticmethod)):
        if isinstance(raw, wrapper):
            return {"kind": kind, "signature": str(inspect.signature(getattr(Tocsin, name)))}
    if inspect.isfunction(raw):
        return {"kind": "method", "signature": str(inspect.signature(raw))}
    return {"kind": type(raw).__name__, "signature": None}


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_every_public_name_keeps_its_kind_and_signature(name: str) -> None:
    assert describe(name) == FROZEN[name]


def test_no_public_name_was_added() -> None:
    """``store`` and ``settings`` were instance attributes; they are properties of the class now
    (read from the services' core, so replacing one reaches every service)."""
    public = {n for n in dir(Tocsin) if not n.startswith("_")}
    assert public == set(FROZEN) - {"__init__"} | {"store", "settings"}


def test_store_and_settings_stay_public_and_replaceable(tocsin: Tocsin) -> None:
    assert isinstance(tocsin.store, Store)
    assert isinstance(tocsin.settings, Settings)
    tocsin.settings = replace(tocsin.settings, max_rendered_bytes=10)
    assert tocsin.settings.max_rendered_bytes == 10
    assert tocsin.action_env().max_rendered_bytes == 10


def test_the_facade_is_one_class_not_a_stack_of_mixins() -> None:
    assert Tocsin.__mro__ == (Tocsin, object)
