"""JSON Merge Patch (RFC 7396): how ``PATCH …/triggers/{id}`` merges one trigger.

Objects merge key by key, recursively; ``null`` removes a key; anything else (lists included)
replaces the value whole. Pure: no I/O, the inputs are never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(target: object, patch: object) -> Any:
    """``target`` with ``patch`` applied (RFC 7396 §2)."""
    if not isinstance(patch, Mapping):
        return patch
    merged: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


__all__ = ["merge_patch"]
