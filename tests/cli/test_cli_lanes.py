"""``tocsin lanes list|contracts|fires|next|pause|resume|requeue|verify`` through Typer's runner
(SPEC §14, §16)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from lanes.lane_support import (
    A_END,
    A_START,
    B_END,
    LANE_ID,
    OBSERVED,
    Probe,
    inside,
    make_lane,
)
from support.cli import invoke
from tocsin import Candidate
from tocsin.service import Tocsin


@pytest.fixture
def recorded(env: dict[str, str], tocsin: Tocsin) -> Tocsin:
    probe = Probe()
    probe.answer = lambda w: [
        Candidate("v1", inside(w.start, 10), {"lang": "zh"}),
        Candidate("v2", inside(w.start, 20), {"lang": "en"}),
    ]
    tocsin.lanes.register([make_lane(probe)])
    for _ in range(2):
        tocsin.lanes.trigger(
            LANE_ID, window=(A_START, A_END), kind="scheduled", scheduled_for=A_END, now=A_END
        )
    tocsin.lanes.trigger(LANE_ID, window=(A_START, B_END), now=B_END)
    return tocsin


def test_list_and_contracts(recorded: Tocsin) -> None:
    listed = invoke("lanes", "list", "--json")
    assert listed.exit_code == 0, listed.output
    (lane,) = json.loads(listed.output)["items"]
    assert (lane["id"], lane["registered"], lane["attempts"]) == (LANE_ID, False, 3)
    table = invoke("lanes", "contracts", LANE_ID)
    assert table.exit_code == 0 and "ready / selected" in table.output
    ignored = invoke("lanes", "contracts", LANE_ID, "--decision", "ignored", "--json")
    (item,) = json.loads(ignored.output)["items"]
    assert item["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    bad = invoke("lanes", "contracts", LANE_ID, "--decision", "done")
    assert bad.exit_code == 1 and "invalid decision filter" in bad.output
    missing = invoke("lanes", "contracts", "nope")
    assert missing.exit_code == 1 and "unknown lane 'nope'" in missing.output


def test_verify_a_jsonl_export_and_name_the_first_tampered_field(
    recorded: Tocsin, tmp_path: Path
) -> None:
    export = invoke("lanes", "contracts", LANE_ID, "--jsonl")
    assert export.exit_code == 0
    lines = export.output.splitlines()
    assert len(lines) == 3
    good = tmp_path / "contracts.jsonl"
    good.write_text(export.output, encoding="utf-8")
    ok = invoke("lanes", "verify", str(good))
    assert ok.exit_code == 0 and "3 contract(s) verified" in ok.output
    doc = json.loads(lines[1])
    doc["selection_policy_version"] = "policy-v2"
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(doc), lines[2]]) + "\n", encoding="utf-8")
    failed = invoke("lanes", "verify", str(bad))
    assert failed.exit_code == 1
    assert "line 2: field run_id" in failed.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    assert invoke("lanes", "verify", str(broken)).exit_code == 1


def test_pause_resume_and_fires(env: dict[str, str], tocsin: Tocsin) -> None:
    """The CLI pauses and resumes a lane known from its row (no ``--app``), on the real clock;
    ``fires`` shows the ``paused`` range the resume recorded, from the lane's first instant."""
    tocsin.lanes.register([make_lane(Probe())])
    tocsin.tick(now=A_START)  # anchored: next instant A_END
    paused = invoke("lanes", "pause", LANE_ID)
    assert paused.exit_code == 0 and f"paused {LANE_ID}" in paused.output
    assert "paused" in invoke("lanes", "list").output
    assert tocsin.tick(now=B_END + timedelta(days=1))["lanes_fired"] == 0
    resumed = invoke("lanes", "resume", LANE_ID)
    assert resumed.exit_code == 0 and f"resumed {LANE_ID}: next run" in resumed.output
    page = json.loads(invoke("lanes", "fires", LANE_ID, "--json").output)
    (skip,) = page["items"]
    assert (skip["kind"], skip["reason"], skip["first_instant"]) == (
        "skip",
        "paused",
        "2026-09-07T23:30:00",
    )
    table = invoke("lanes", "fires", LANE_ID)
    assert "0 scheduled run(s)" in table.output and "paused" in table.output
    missing = invoke("lanes", "pause", "nope")
    assert missing.exit_code == 1 and "error (404): unknown lane 'nope'" in missing.output


def test_next_needs_a_registered_lane(env: dict[str, str], tocsin: Tocsin) -> None:
    """``next`` reads the lane's definition (its catch-up decides what a tick runs): without
    ``--app`` a lane known only from its row is unknown."""
    tocsin.lanes.register([make_lane(Probe())])
    tocsin.tick(now=A_START)
    missing = invoke("lanes", "next", LANE_ID, "-n", "2")
    assert missing.exit_code == 1 and f"unknown lane '{LANE_ID}'" in missing.output


def test_requeue_a_pending_attempt_and_refuse_a_recorded_one(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    tocsin.lanes.register([make_lane(Probe())])
    tocsin.tick(now=A_START)
    assert tocsin.tick(now=OBSERVED)["lanes_fired"] == 1
    (pending,) = tocsin.lanes.contracts(LANE_ID)["items"]
    attempt_id = pending["attempt_id"]
    ok = invoke("lanes", "requeue", LANE_ID, attempt_id)
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip() == f"requeued {attempt_id} of {LANE_ID}: pending"
    assert tocsin.work(now=OBSERVED) == 1
    refused = invoke("lanes", "requeue", LANE_ID, attempt_id)
    assert refused.exit_code == 1
    assert (
        "error (409): lane attempt is recorded; only pending (or stale-running) attempts can be"
        " requeued; a failed run is retried with kind 'retry'"
    ) in refused.output
    unknown = invoke("lanes", "requeue", LANE_ID, "attempt_x")
    assert unknown.exit_code == 1
    assert "error (404): lane attempt 'attempt_x' not found" in unknown.output
