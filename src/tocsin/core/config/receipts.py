"""Per-action receipts and where a retry resumes (SPEC §8, §9.2).

A receipt is ``{"action_id", "type", "ok", "detail", "started_at", "ended_at"}``: SPEC §8's
four keys, and the ISO instants the action really started and ended (the worker reads them from
its pass clock, ``runs.clock``; receipts written before they existed lack them). Retry resumes
at the first action without a successful receipt, matched by ``action_id`` (never by position,
so reordering or inserting actions cannot skip one). Only legacy receipts without an
``action_id`` fall back to position: receipt *i* speaks for action *i*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

RECEIPT_DETAIL_LIMIT = 300
RUN_ERROR_LIMIT = 1000


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters."""
    return text if len(text) <= limit else text[:limit]


def truncate_error(msg: object) -> str:
    """A run's top-level error: the message cut to 1000 characters (SPEC §8)."""
    return truncate(str(msg), RUN_ERROR_LIMIT)


def make_receipt(
    action_id: str | None,
    type: str,
    ok: bool,
    detail: object = None,
    *,
    started_at: datetime | None = None,
    ended_at: datetime | None = None,
) -> dict[str, Any]:
    """One action's receipt; ``detail`` is stringified and cut to 300 characters (or None);
    ``started_at``/``ended_at``, when given, are stored as ISO strings."""
    text = None if detail is None else truncate(str(detail), RECEIPT_DETAIL_LIMIT)
    receipt: dict[str, Any] = {"action_id": action_id, "type": type, "ok": ok, "detail": text}
    for key, at in (("started_at", started_at), ("ended_at", ended_at)):
        if at is not None:
            receipt[key] = at.isoformat()
    return receipt


def upsert_receipt(
    receipts: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A new list with ``receipt`` replacing the one of the same ``action_id`` (or appended)."""
    out = [dict(r) for r in receipts if isinstance(r, Mapping)]
    action_id = receipt.get("action_id")
    for index, existing in enumerate(out):
        if action_id is not None and existing.get("action_id") == action_id:
            out[index] = dict(receipt)
            return out
    out.append(dict(receipt))
    return out


def pending_actions(
    actions: Sequence[Mapping[str, Any]], receipts: Sequence[object]
) -> list[tuple[int, Mapping[str, Any]]]:
    """``(position, action)`` of every action without a successful receipt, in order: what a
    run (re)executes (SPEC §9.2). Matched by ``action_id``; a legacy receipt without an id
    speaks for the action at its position; anything that is not a receipt is ignored."""
    done = [r for r in receipts if isinstance(r, Mapping) and r.get("ok") is True]
    done_ids = {r["action_id"] for r in done if r.get("action_id") is not None}
    legacy = {
        i
        for i, r in enumerate(receipts)
        if isinstance(r, Mapping) and r.get("ok") is True and r.get("action_id") is None
    }
    return [
        (position, action)
        for position, action in enumerate(actions)
        if not (action.get("id") is not None and action.get("id") in done_ids)
        and position not in legacy
    ]


__all__ = [
    "RECEIPT_DETAIL_LIMIT",
    "RUN_ERROR_LIMIT",
    "make_receipt",
    "pending_actions",
    "truncate",
    "truncate_error",
    "upsert_receipt",
]
