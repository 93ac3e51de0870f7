"""``verify``: recompute a stored ``trigger-contract.v1`` document (SPEC §14). Pure.

Checked in document order, the first difference raises ``ContractMismatch(field, …)``:

1. ``schema_version``, ``lane_id``, ``selection_policy_version`` are present and well-formed;
2. ``trigger.kind`` is ``scheduled | manual | retry``; ``trigger.scheduled_for``,
   ``trigger.observed_at`` and both window bounds are RFC 3339 with an offset; the window is
   non-empty;
3. ``run_id`` recomputes from the stored text of its five inputs, by the current formula or, for
   a contract recorded before it, the legacy one (``contract.FORMULAS``, tried in order);
   ``attempt_id`` recomputes from ``run_id`` and the attempt number by the same formula (the
   number given, or the first of 1..``MAX_ATTEMPT_SEARCH`` that fits);
4. the layers are consistent (a failed source has a category and a null count; a responded
   source's count equals accepted + rejected; rejection reasons are known) and the decision is
   the one they imply. A source that was not asked allows only ``rejected/window_overlap`` or
   ``ignored/duplicate_trigger`` with an empty selection.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.contract.lane import (
    FORMULAS,
    IGNORED_DUPLICATE,
    MAX_ATTEMPT_SEARCH,
    OUTSIDE_WINDOW,
    POLICY_EXCLUDED,
    REJECTED_OVERLAP,
    SCHEMA_VERSION,
    TRIGGER_KINDS,
    ContractMismatch,
    derive,
)

SOURCE_STATUSES = ("responded", "failed", "not_asked")


def _get(doc: Mapping[str, Any], path: str) -> Any:
    node: Any = doc
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise ContractMismatch(
                path, messages.CONTRACT_EXPECTED_VALUE, messages.CONTRACT_FOUND_MISSING
            )
        node = node[part]
    return node


def _text(doc: Mapping[str, Any], path: str) -> str:
    value = _get(doc, path)
    if not isinstance(value, str) or not value:
        raise ContractMismatch(path, messages.CONTRACT_EXPECTED_TEXT, value)
    return value


def _instant(doc: Mapping[str, Any], path: str) -> datetime:
    text = _text(doc, path)
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ContractMismatch(path, messages.CONTRACT_EXPECTED_INSTANT, text) from None
    if value.tzinfo is None or "T" not in text:
        raise ContractMismatch(path, messages.CONTRACT_EXPECTED_INSTANT, text)
    return value


def _check_ids(doc: Mapping[str, Any], attempt: int | None) -> int:
    inputs = {
        "lane_id": _text(doc, "lane_id"),
        "scheduled_for": _text(doc, "trigger.scheduled_for"),
        "window_start": _text(doc, "window.start_inclusive"),
        "window_end": _text(doc, "window.end_exclusive"),
        "policy_version": _text(doc, "selection_policy_version"),
    }
    stored = _get(doc, "run_id")
    runs = [(make_run(**inputs), make_attempt) for make_run, make_attempt in FORMULAS]
    matching = [(run, make_attempt) for run, make_attempt in runs if run == stored]
    if not matching:
        raise ContractMismatch("run_id", runs[0][0], stored)
    expected_run, attempt_id = matching[0]
    found = _get(doc, "attempt_id")
    if attempt is not None:
        expected = attempt_id(expected_run, attempt)
        if found != expected:
            raise ContractMismatch("attempt_id", expected, found)
        return attempt
    for n in range(1, MAX_ATTEMPT_SEARCH + 1):
        if attempt_id(expected_run, n) == found:
            return n
    raise ContractMismatch("attempt_id", messages.contract_expected_attempt(expected_run), found)


def _check_selection(doc: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    accepted = _get(doc, "selection.accepted_refs")
    rejected = _get(doc, "selection.rejected")
    if not isinstance(accepted, list) or not all(isinstance(r, str) for r in accepted):
        raise ContractMismatch("selection.accepted_refs", messages.CONTRACT_EXPECTED_REFS, accepted)
    if not isinstance(rejected, list):
        raise ContractMismatch("selection.rejected", messages.CONTRACT_EXPECTED_LIST, rejected)
    for entry in rejected:
        ok = isinstance(entry, Mapping) and isinstance(entry.get("ref"), str)
        if not ok or entry.get("reason") not in (OUTSIDE_WINDOW, POLICY_EXCLUDED):
            raise ContractMismatch(
                "selection.rejected", messages.CONTRACT_EXPECTED_REJECTIONS, entry
            )
    return accepted, rejected


def _check_source(doc: Mapping[str, Any], total: int) -> Mapping[str, Any]:
    source = _get(doc, "source_observation")
    status = _get(doc, "source_observation.status")
    count = _get(doc, "source_observation.candidate_count")
    if status not in SOURCE_STATUSES:
        raise ContractMismatch("source_observation.status", "/".join(SOURCE_STATUSES), status)
    if status == "responded":
        if isinstance(count, bool) or not isinstance(count, int) or count != total:
            raise ContractMismatch("source_observation.candidate_count", total, count)
    elif count is not None:
        raise ContractMismatch("source_observation.candidate_count", None, count)
    if status == "failed":
        _text(doc, "source_observation.failure_category")
    return source  # type: ignore[no-any-return]


def _check_decision(doc: Mapping[str, Any], source: Mapping[str, Any]) -> None:
    found = (_get(doc, "decision.status"), _get(doc, "decision.reason"))
    if source["status"] == "not_asked":
        allowed = (REJECTED_OVERLAP, IGNORED_DUPLICATE)
        if found not in allowed:
            raise ContractMismatch(
                "decision.status", messages.CONTRACT_EXPECTED_NOT_ASKED, found[0]
            )
        if doc["selection"]["accepted_refs"] or doc["selection"]["rejected"]:
            raise ContractMismatch(
                "selection", messages.CONTRACT_EXPECTED_NO_SELECTION, doc["selection"]
            )
        return
    expected = derive(source, doc["selection"])
    if found[0] != expected[0]:
        raise ContractMismatch("decision.status", expected[0], found[0])
    if found[1] != expected[1]:
        raise ContractMismatch("decision.reason", expected[1], found[1])


def verify(doc: object, attempt: int | None = None) -> int:
    """Check ``doc``; returns its attempt number, or raises ``ContractMismatch``."""
    if not isinstance(doc, Mapping):
        raise ContractMismatch("contract", messages.CONTRACT_EXPECTED_OBJECT, type(doc).__name__)
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ContractMismatch("schema_version", SCHEMA_VERSION, doc.get("schema_version"))
    kind = _get(doc, "trigger.kind")
    if kind not in TRIGGER_KINDS:
        raise ContractMismatch("trigger.kind", "/".join(TRIGGER_KINDS), kind)
    for path in ("trigger.scheduled_for", "trigger.observed_at"):
        _instant(doc, path)
    start = _instant(doc, "window.start_inclusive")
    end = _instant(doc, "window.end_exclusive")
    if not start < end:
        raise ContractMismatch("window.end_exclusive", messages.CONTRACT_EXPECTED_AFTER_START, end)
    number = _check_ids(doc, attempt)
    accepted, rejected = _check_selection(doc)
    source = _check_source(doc, len(accepted) + len(rejected))
    _check_decision(doc, source)
    return number


__all__ = ["SOURCE_STATUSES", "verify"]
