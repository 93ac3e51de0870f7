"""SPEC §14 ids: the seed's own example contract, reproduced byte for byte through the facade
(over HTTP: tests/api/test_api_lanes.py); a contract recorded with the earlier id formula still
verifies and is still recognised as the same run; a manual trigger repeated for the same window
is a duplicate, not an overlap."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from tocsin import Tocsin
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Store

from .lane_support import (
    A_END,
    A_START,
    B_END,
    LANE_ID,
    OBSERVED,
    SEED_CONTRACT,
    Probe,
    make_lane,
)


def _same_bytes(doc: dict[str, Any]) -> None:
    """``doc`` serialises to the seed's contract byte for byte (key order included), in the
    seed's own layout: one key per line, the three short layers inline."""
    lines = ["{"]
    for key, value in doc.items():
        if key in ("trigger", "window"):
            inner = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f'"{key}": {{\n{inner}\n}},')
        elif isinstance(value, dict):
            inner = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f'"{key}": {{ {inner} }},')
        else:
            lines.append(f'"{key}": {json.dumps(value)},')
    lines[-1] = lines[-1].rstrip(",")
    assert "\n".join([*lines, "}"]) == SEED_CONTRACT


def test_the_seeds_example_contract_is_reproduced_byte_for_byte(tocsin: Tocsin) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    got = tocsin.lanes.trigger(
        LANE_ID, window=(A_START, A_END), kind="scheduled", scheduled_for=A_END, now=OBSERVED
    )
    doc = got["contract"]
    assert doc["run_id"] == "run_a860db97e33115dfb9030fc9986dd88c"
    assert doc["attempt_id"] == "attempt_9b92c6df2d1d4da4125b6de15d118f7f"
    _same_bytes(doc)
    assert tocsin.lanes.verify(json.loads(SEED_CONTRACT)) == {
        "ok": True,
        "run_id": "run_a860db97e33115dfb9030fc9986dd88c",
        "attempt_id": "attempt_9b92c6df2d1d4da4125b6de15d118f7f",
        "attempt": 1,
    }
    stored = tocsin.lanes.contracts(LANE_ID)["items"]
    assert [item["contract"] for item in stored] == [json.loads(SEED_CONTRACT)]


# --- contracts recorded with the earlier formula ----------------------------------------------


def _old_digest(value: dict[str, Any]) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _write_the_old_way(store: Store) -> dict[str, Any]:
    """A lane run and its first attempt as tocsin recorded them before the seed's formula: the
    run id over the sorted flat keys, the attempt id over ``{"attempt", "run_id"}``."""
    old = json.loads(SEED_CONTRACT)
    old["run_id"] = "run_" + _old_digest(
        {
            "lane_id": LANE_ID,
            "scheduled_for": old["trigger"]["scheduled_for"],
            "window_start": old["window"]["start_inclusive"],
            "window_end": old["window"]["end_exclusive"],
            "selection_policy_version": "policy-v1",
        }
    )
    old["attempt_id"] = "attempt_" + _old_digest({"attempt": 1, "run_id": old["run_id"]})
    now = OBSERVED
    with store.begin() as tx:
        store_lanes.insert_lane(
            tx,
            values={
                "id": LANE_ID,
                "cron": "30 7 * * *",
                "timezone": "Asia/Taipei",
                "policy_version": "policy-v1",
                "next_fire_at": None,
                "created_at": now,
                "updated_at": now,
            },
        )
        store_lanes.insert_run(
            tx,
            values={
                "run_id": old["run_id"],
                "lane_id": LANE_ID,
                "zone": "Asia/Taipei",
                "scheduled_for": A_END,
                "window_start": A_START,
                "window_end": A_END,
                "policy_version": "policy-v1",
                "admitted": True,
                "attempts": 1,
                "state": "recorded",
                "decision": "noop",
                "handler_status": None,
                "created_at": now,
                "updated_at": now,
            },
        )
        store_lanes.insert_attempt(
            tx,
            values={
                "attempt_id": old["attempt_id"],
                "run_id": old["run_id"],
                "lane_id": LANE_ID,
                "attempt": 1,
                "kind": "scheduled",
                "observed_at": now,
                "state": "recorded",
                "decision_status": "noop",
                "decision_reason": "source_empty",
                "contract": old,
                "handler_status": None,
                "handler_error": None,
                "error": None,
                "created_at": now,
                "updated_at": now,
            },
        )
    return old


def test_a_contract_stored_with_the_old_formula_verifies_and_its_duplicate_is_recognised(
    store: Store, tocsin: Tocsin
) -> None:
    old = _write_the_old_way(store)
    assert old["run_id"] != "run_a860db97e33115dfb9030fc9986dd88c"
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    assert tocsin.lanes.verify(old)["attempt"] == 1
    later = OBSERVED + timedelta(minutes=1)
    again = tocsin.lanes.trigger(
        LANE_ID, window=(A_START, A_END), kind="scheduled", scheduled_for=A_END, now=later
    )
    assert again["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert (again["run_id"], again["attempt"]) == (old["run_id"], 2)
    assert probe.counts() == (0, 0)
    # the manual trigger of the same window (scheduled_for: the window's end) is the same run
    manual = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=later)
    assert manual["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert manual["run_id"] == old["run_id"]
    items = tocsin.lanes.contracts(LANE_ID)["items"]
    assert len(items) == 3
    for item in items:
        assert tocsin.lanes.verify(item)["attempt"] == item["attempt"]
    # the next window is a new run, with the seed's formula
    nxt = tocsin.lanes.trigger(LANE_ID, window=(A_END, B_END), now=B_END)
    assert nxt["decision"] == {"status": "noop", "reason": "source_empty"}
    assert tocsin.lanes.verify(nxt)["ok"] is True


def test_a_manual_trigger_repeated_for_its_window_is_a_duplicate(tocsin: Tocsin) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    first = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)
    assert first["scheduled_for"] == A_END
    assert first["contract"]["trigger"]["scheduled_for"] == "2026-09-08T07:30:00+08:00"
    again = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=B_END)
    assert again["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert (again["run_id"], again["attempt"]) == (first["run_id"], 2)
    assert probe.counts() == (1, 0)
