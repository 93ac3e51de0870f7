"""SPEC §14: the run contract's pure parts — ids, half-open windows, decisions, verify."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tocsin.core.contract import lane as contract
from tocsin.core.contract.lane import ContractMismatch, Window
from tocsin.core.contract.verify import verify
from tocsin.errors import ValidationError

TPE = ZoneInfo("Asia/Taipei")
A = Window(datetime(2026, 9, 7, 22, tzinfo=TPE), datetime(2026, 9, 8, 7, 30, tzinfo=TPE))
B = Window(datetime(2026, 9, 8, 7, 30, tzinfo=TPE), datetime(2026, 9, 8, 22, tzinfo=TPE))
IDS = {
    "lane_id": "content-intake",
    "scheduled_for": "2026-09-08T07:30:00+08:00",
    "window_start": "2026-09-07T22:00:00+08:00",
    "window_end": "2026-09-08T07:30:00+08:00",
    "policy_version": "policy-v1",
}


def _doc(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "lane_id": "content-intake",
        "zone": "Asia/Taipei",
        "kind": "scheduled",
        "scheduled_for": A.end,
        "observed_at": A.end + timedelta(seconds=5),
        "window": A,
        "policy_version": "policy-v1",
        "attempt": 1,
        "source": contract.source_layer(0, None),
        "selection": {"accepted_refs": [], "rejected": []},
        "decision": contract.NOOP_EMPTY,
    }
    args.update(over)
    return contract.document(**args)


def test_run_id_is_sha256_of_the_compact_json_in_the_contracts_key_order() -> None:
    text = (
        '{"lane_id":"content-intake","scheduled_for":"2026-09-08T07:30:00+08:00",'
        '"window":{"start_inclusive":"2026-09-07T22:00:00+08:00",'
        '"end_exclusive":"2026-09-08T07:30:00+08:00"},"selection_policy_version":"policy-v1"}'
    )
    expected = "run_" + hashlib.sha256(text.encode()).hexdigest()[:32]
    assert contract.run_id(**IDS) == expected == "run_a860db97e33115dfb9030fc9986dd88c"
    assert contract.run_id(**IDS) == contract.run_id(**dict(IDS))  # stable when recomputed
    assert contract.attempt_id(expected, 1) == (
        "attempt_" + hashlib.sha256(f"{expected}\n1".encode()).hexdigest()[:32]
    )
    assert contract.attempt_id(expected, 1) == "attempt_9b92c6df2d1d4da4125b6de15d118f7f"


def test_the_legacy_formula_still_verifies() -> None:
    body = {
        "lane_id": "content-intake",
        "scheduled_for": "2026-09-08T07:30:00+08:00",
        "selection_policy_version": "policy-v1",
        "window_end": "2026-09-08T07:30:00+08:00",
        "window_start": "2026-09-07T22:00:00+08:00",
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    old = "run_" + hashlib.sha256(text.encode()).hexdigest()[:32]
    assert contract.legacy_run_id(**IDS) == old != contract.run_id(**IDS)
    attempt_text = json.dumps({"attempt": 2, "run_id": old}, separators=(",", ":"))
    old_attempt = "attempt_" + hashlib.sha256(attempt_text.encode()).hexdigest()[:32]
    assert contract.legacy_attempt_id(old, 2) == old_attempt
    doc = _doc(attempt=2, legacy_ids=True)
    assert (doc["run_id"], doc["attempt_id"]) == (old, old_attempt)
    assert verify(doc) == 2
    mixed = {**doc, "attempt_id": contract.attempt_id(old, 2)}  # one formula per contract
    with pytest.raises(ContractMismatch) as caught:
        verify(mixed)
    assert caught.value.field == "attempt_id"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("scheduled_for", "2026-09-08T07:31:00+08:00"),
        ("window_start", "2026-09-07T21:59:59+08:00"),
        ("policy_version", "policy-v2"),
    ],
)
def test_run_id_changes_with_scheduled_for_window_start_and_policy(field: str, value: str) -> None:
    assert contract.run_id(**{**IDS, field: value}) != contract.run_id(**IDS)


def test_attempt_ids_differ_per_attempt_and_need_a_positive_number() -> None:
    run = contract.run_id(**IDS)
    assert contract.attempt_id(run, 1) != contract.attempt_id(run, 2)
    for bad in (0, -1, True, "1"):
        with pytest.raises(ValidationError):
            contract.attempt_id(run, bad)  # type: ignore[arg-type]


def test_the_boundary_instant_belongs_to_the_later_window() -> None:
    boundary = A.end
    assert not A.contains(boundary)
    assert B.contains(boundary)
    assert A.contains(boundary - timedelta(microseconds=1))
    assert not A.overlaps(B) and not B.overlaps(A)


def test_moving_a_window_start_back_one_second_overlaps() -> None:
    moved = Window(B.start - timedelta(seconds=1), B.end)
    assert moved.overlaps(A) and A.overlaps(moved)


@pytest.mark.parametrize(
    ("start", "end"),
    [(A.end, A.start), (A.start, A.start), (A.start.replace(tzinfo=None), A.end)],
)
def test_a_window_is_non_empty_and_aware(start: datetime, end: datetime) -> None:
    with pytest.raises(ValidationError):
        Window(start, end)


def test_instants_keep_the_lane_zone_offset() -> None:
    doc = _doc()
    assert doc["trigger"] == {
        "kind": "scheduled",
        "scheduled_for": "2026-09-08T07:30:00+08:00",
        "observed_at": "2026-09-08T07:30:05+08:00",
    }
    assert doc["window"] == {
        "start_inclusive": "2026-09-07T22:00:00+08:00",
        "end_exclusive": "2026-09-08T07:30:00+08:00",
    }
    assert list(doc) == [
        "schema_version",
        "lane_id",
        "trigger",
        "window",
        "selection_policy_version",
        "run_id",
        "attempt_id",
        "source_observation",
        "selection",
        "decision",
    ]
    assert doc["run_id"] == contract.run_id(**IDS)


class _C:
    def __init__(self, ref: str, at: datetime, ok: bool) -> None:
        self.ref, self.occurred_at, self.ok = ref, at, ok


def test_candidates_are_placed_by_their_own_time_then_the_policy() -> None:
    items = [
        _C("early", A.start - timedelta(seconds=1), True),
        _C("first", A.start, True),
        _C("refused", A.start + timedelta(hours=1), False),
        _C("boundary", A.end, True),
    ]
    sel = contract.select(A, items, lambda c: c.ok)
    assert sel.layer() == {
        "accepted_refs": ["first"],
        "rejected": [
            {"ref": "early", "reason": "outside_window"},
            {"ref": "refused", "reason": "policy_excluded"},
            {"ref": "boundary", "reason": "outside_window"},
        ],
    }


@pytest.mark.parametrize(
    ("source", "selection", "decision"),
    [
        (contract.source_layer(0, None), {"accepted_refs": []}, ("noop", "source_empty")),
        (
            contract.source_layer(None, "timeout"),
            {"accepted_refs": []},
            ("stopped", "source_unavailable"),
        ),
        (contract.source_layer(2, None), {"accepted_refs": []}, ("noop", "no_eligible_input")),
        (contract.source_layer(2, None), {"accepted_refs": ["a"]}, ("ready", "selected")),
    ],
)
def test_derive(
    source: dict[str, Any], selection: dict[str, Any], decision: tuple[str, str]
) -> None:
    assert contract.derive(source, selection) == decision


def test_a_failed_source_has_a_category_and_no_count() -> None:
    assert contract.source_layer(None, "timeout") == {
        "status": "failed",
        "candidate_count": None,
        "failure_category": "timeout",
    }


def test_verify_accepts_every_decision_and_finds_the_attempt_number() -> None:
    ready = _doc(
        attempt=3,
        source=contract.source_layer(2, None),
        selection={"accepted_refs": ["a"], "rejected": [{"ref": "b", "reason": "policy_excluded"}]},
        decision=contract.READY,
    )
    assert verify(ready) == 3
    assert verify(ready, attempt=3) == 3
    for decision in (contract.REJECTED_OVERLAP, contract.IGNORED_DUPLICATE):
        assert verify(_doc(source=dict(contract.NOT_ASKED), decision=decision)) == 1
    stopped = _doc(source=contract.source_layer(None, "timeout"), decision=contract.STOPPED)
    assert verify(stopped) == 1


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("schema_version", "trigger-contract.v2", "schema_version"),
        ("lane_id", "other-lane", "run_id"),
        ("trigger.scheduled_for", "2026-09-08T07:31:00+08:00", "run_id"),
        ("trigger.scheduled_for", "2026-09-08T07:30:00", "trigger.scheduled_for"),
        ("trigger.kind", "cron", "trigger.kind"),
        ("window.start_inclusive", "2026-09-07T21:59:59+08:00", "run_id"),
        ("selection_policy_version", "policy-v2", "run_id"),
        ("run_id", "run_" + "0" * 32, "run_id"),
        ("attempt_id", "attempt_" + "0" * 32, "attempt_id"),
        ("source_observation.candidate_count", 3, "source_observation.candidate_count"),
        ("decision.status", "ready", "decision.status"),
        ("decision.reason", "no_eligible_input", "decision.reason"),
        ("source_observation.status", "failed", "source_observation.candidate_count"),
    ],
)
def test_a_tampered_contract_fails_naming_the_field(path: str, value: Any, field: str) -> None:
    doc = copy.deepcopy(_doc())
    node = doc
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    with pytest.raises(ContractMismatch) as caught:
        verify(doc)
    assert caught.value.field == field
    assert f"'{field}'" in caught.value.detail


def test_a_wrong_attempt_number_fails_on_attempt_id() -> None:
    with pytest.raises(ContractMismatch) as caught:
        verify(_doc(attempt=2), attempt=1)
    assert caught.value.field == "attempt_id"


def test_a_not_asked_source_cannot_carry_a_selection_or_a_work_decision() -> None:
    doc = _doc(source=dict(contract.NOT_ASKED), decision=contract.NOOP_EMPTY)
    with pytest.raises(ContractMismatch) as caught:
        verify(doc)
    assert caught.value.field == "decision.status"


@given(
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=2, max_size=8, unique=True),
    st.integers(min_value=-10, max_value=10**6 + 10),
)
def test_consecutive_windows_place_every_instant_in_at_most_one(
    offsets: list[int], probe: int
) -> None:
    base = A.start
    edges = [base + timedelta(seconds=s) for s in sorted(offsets)]
    windows = [Window(a, b) for a, b in pairwise(edges)]
    instant = base + timedelta(seconds=probe)
    owners = [w for w in windows if w.contains(instant)]
    assert len(owners) == (1 if edges[0] <= instant < edges[-1] else 0)
    assert not any(a.overlaps(b) for a, b in pairwise(windows))
