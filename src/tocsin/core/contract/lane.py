"""The run contract of a lane: ``trigger-contract.v1`` (SPEC §14). Pure: no I/O, no clock.

- Windows are half-open ``[start, end)``: the boundary instant belongs to the later window, and
  two windows overlap when ``a.start < b.end and b.start < a.end``.
- ``run_id`` = ``run_`` + the first 32 hex characters of SHA-256 over the compact JSON
  (``separators=(",", ":")``, keys in this order, not sorted) ``{"lane_id", "scheduled_for",
  "window": {"start_inclusive", "end_exclusive"}, "selection_policy_version"}``, each instant the
  contract's own RFC 3339 string (seconds, the lane zone's offset). ``attempt_id`` =
  ``attempt_`` + the first 32 hex characters of SHA-256 over ``"<run_id>\n<attempt number>"``.
  This reproduces the seed's example (SPEC §14).
- The ids of contracts recorded before (``legacy_run_id`` / ``legacy_attempt_id``: sorted-key
  canonical JSON of the five flat inputs, and of ``{"attempt", "run_id"}``) still verify, and a
  run recorded with them keeps its ids: its later attempts use the legacy attempt formula.
- Decisions, in the seed's order: ``rejected/window_overlap`` and ``ignored/duplicate_trigger``
  (source not asked), ``stopped/source_unavailable``, ``noop/source_empty``,
  ``noop/no_eligible_input``, ``ready/selected``.

``tocsin.core.contract.verify.verify`` recomputes both ids and re-derives the decision from
the stored layers; the first difference raises :class:`ContractMismatch` naming the field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo

from tocsin import messages
from tocsin.errors import ValidationError

SCHEMA_VERSION = "trigger-contract.v1"
TRIGGER_KINDS = ("scheduled", "manual", "retry")
OUTSIDE_WINDOW = "outside_window"
POLICY_EXCLUDED = "policy_excluded"
HASH_CHARS = 32
MAX_ATTEMPT_SEARCH = 100_000  # verify without a known attempt number tries 1..this

REJECTED_OVERLAP = ("rejected", "window_overlap")
IGNORED_DUPLICATE = ("ignored", "duplicate_trigger")
STOPPED = ("stopped", "source_unavailable")
NOOP_EMPTY = ("noop", "source_empty")
NOOP_NONE_ELIGIBLE = ("noop", "no_eligible_input")
READY = ("ready", "selected")
DECISIONS = (REJECTED_OVERLAP, IGNORED_DUPLICATE, STOPPED, NOOP_EMPTY, NOOP_NONE_ELIGIBLE, READY)
NOT_ASKED = {"status": "not_asked", "candidate_count": None}
# a day inside datetime's range: every zone's offset (under a day) can express these instants
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)


class ContractMismatch(ValidationError):
    """A stored contract differs from what its own layers recompute to; ``.field`` names it."""

    def __init__(self, field: str, expected: object, found: object) -> None:
        super().__init__(messages.contract_mismatch(field, expected, found))
        self.field = field


@dataclass(frozen=True, slots=True)
class Window:
    """A half-open window ``[start, end)`` of aware instants."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        for value in (self.start, self.end):
            if not isinstance(value, datetime) or value.tzinfo is None:
                raise ValidationError(messages.lane_window_invalid(self.start, self.end))
        if not self.start < self.end:
            raise ValidationError(messages.lane_window_invalid(self.start, self.end))
        check_instant(self.start)
        check_instant(self.end)

    def contains(self, instant: datetime) -> bool:
        return self.start <= instant < self.end

    def overlaps(self, other: Window) -> bool:
        return self.start < other.end and other.start < self.end


def check_instant(instant: datetime) -> datetime:
    """``instant`` (aware) when every lane zone can express it (``rfc3339``), else a
    ``ValidationError``: year 1 or 9999 shifted by an offset overflows ``datetime``."""
    if not EARLIEST <= instant <= LATEST:
        raise ValidationError(messages.lane_instant_out_of_range(instant, EARLIEST, LATEST))
    return instant


class Placeable(Protocol):
    @property
    def ref(self) -> str: ...
    @property
    def occurred_at(self) -> datetime: ...


C = TypeVar("C", bound=Placeable)


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text: the bytes every id is hashed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:HASH_CHARS]


def rfc3339(instant: datetime, zone: str) -> str:
    """``instant`` as RFC 3339 seconds with ``zone``'s offset at that instant."""
    return instant.astimezone(ZoneInfo(zone)).isoformat(timespec="seconds")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def run_id(
    *, lane_id: str, scheduled_for: str, window_start: str, window_end: str, policy_version: str
) -> str:
    """The logical run: same inputs, same id (instants already formatted by ``rfc3339``). The
    JSON keeps the contract's own key order and nesting (SPEC §14, the seed's formula)."""
    body = {
        "lane_id": lane_id,
        "scheduled_for": scheduled_for,
        "window": {"start_inclusive": window_start, "end_exclusive": window_end},
        "selection_policy_version": policy_version,
    }
    return "run_" + _sha(json.dumps(body, separators=(",", ":"), ensure_ascii=False))


def _check_attempt(attempt: int) -> int:
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise ValidationError(messages.lane_attempt_invalid(attempt))
    return attempt


def attempt_id(run: str, attempt: int) -> str:
    """One arrival of a run: ``attempt`` is a positive sequence number."""
    return "attempt_" + _sha(f"{run}\n{_check_attempt(attempt)}")


def legacy_run_id(
    *, lane_id: str, scheduled_for: str, window_start: str, window_end: str, policy_version: str
) -> str:
    """The run id contracts were recorded with before the seed's formula (sorted flat keys)."""
    return "run_" + _digest(
        {
            "lane_id": lane_id,
            "scheduled_for": scheduled_for,
            "window_start": window_start,
            "window_end": window_end,
            "selection_policy_version": policy_version,
        }
    )


def legacy_attempt_id(run: str, attempt: int) -> str:
    """The attempt id of a run recorded with :func:`legacy_run_id`."""
    return "attempt_" + _digest({"attempt": _check_attempt(attempt), "run_id": run})


#: the id formulas, newest first: ``(run id, attempt id)``; ``verify`` tries them in this order
FORMULAS = ((run_id, attempt_id), (legacy_run_id, legacy_attempt_id))


@dataclass(frozen=True, slots=True)
class Selection:
    accepted: tuple[Placeable, ...]
    rejected: tuple[dict[str, str], ...]

    def layer(self) -> dict[str, Any]:
        return {
            "accepted_refs": [c.ref for c in self.accepted],
            "rejected": [dict(r) for r in self.rejected],
        }


def select(window: Window, candidates: Sequence[C], policy: Callable[[C], bool]) -> Selection:
    """Place each candidate by its own ``occurred_at``, then ask the policy of those inside."""
    accepted: list[Placeable] = []
    rejected: list[dict[str, str]] = []
    for cand in candidates:
        if not window.contains(cand.occurred_at):
            rejected.append({"ref": cand.ref, "reason": OUTSIDE_WINDOW})
        elif policy(cand):
            accepted.append(cand)
        else:
            rejected.append({"ref": cand.ref, "reason": POLICY_EXCLUDED})
    return Selection(tuple(accepted), tuple(rejected))


def source_layer(count: int | None, failure: str | None) -> dict[str, Any]:
    """``responded`` with the count, or ``failed`` with its category (count null)."""
    if failure is not None:
        return {"status": "failed", "candidate_count": None, "failure_category": failure}
    return {"status": "responded", "candidate_count": count}


def derive(source: Mapping[str, Any], selection: Mapping[str, Any]) -> tuple[str, str]:
    """The decision the source and selection layers imply (source must have been asked)."""
    if source.get("status") == "failed":
        return STOPPED
    if source.get("candidate_count") == 0:
        return NOOP_EMPTY
    return READY if selection.get("accepted_refs") else NOOP_NONE_ELIGIBLE


def document(
    *,
    lane_id: str,
    zone: str,
    kind: str,
    scheduled_for: datetime,
    observed_at: datetime,
    window: Window,
    policy_version: str,
    attempt: int,
    source: Mapping[str, Any],
    selection: Mapping[str, Any],
    decision: tuple[str, str],
    legacy_ids: bool = False,
) -> dict[str, Any]:
    """The contract document, exactly as SPEC §14 shows it (``legacy_ids``: the run was
    recorded with the legacy formulas, which its attempts keep)."""
    sched, start, end = (rfc3339(v, zone) for v in (scheduled_for, window.start, window.end))
    make_run, make_attempt = FORMULAS[1 if legacy_ids else 0]
    run = make_run(
        lane_id=lane_id,
        scheduled_for=sched,
        window_start=start,
        window_end=end,
        policy_version=policy_version,
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "lane_id": lane_id,
        "trigger": {
            "kind": kind,
            "scheduled_for": sched,
            "observed_at": rfc3339(observed_at, zone),
        },
        "window": {"start_inclusive": start, "end_exclusive": end},
        "selection_policy_version": policy_version,
        "run_id": run,
        "attempt_id": make_attempt(run, attempt),
        "source_observation": dict(source),
        "selection": {
            "accepted_refs": list(selection["accepted_refs"]),
            "rejected": [dict(r) for r in selection["rejected"]],
        },
        "decision": {"status": decision[0], "reason": decision[1]},
    }


__all__ = [
    "DECISIONS",
    "FORMULAS",
    "SCHEMA_VERSION",
    "TRIGGER_KINDS",
    "ContractMismatch",
    "Selection",
    "Window",
    "attempt_id",
    "canonical_json",
    "derive",
    "document",
    "legacy_attempt_id",
    "legacy_run_id",
    "rfc3339",
    "run_id",
    "select",
    "source_layer",
]
