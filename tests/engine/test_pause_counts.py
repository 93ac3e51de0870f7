"""A date trigger's values that fall due inside a pause (SPEC §7, engine.pause), through the
facade (``t.preview``, ``t.tick``, ``t.skips``) on both backends:

- they never fire; the tick consumes each one in the ledger, without a run, when it scans its
  page, and records it in the skip ledger as ``paused`` (one row per pause, counts added up
  across ticks);
- the preview counts them as ``already_fired``, while the trigger is still paused too, and the
  arm says ``paused: true`` and ``paused_since`` while paused;
- the preview's six counts and their invariants hold in every state: a property over random
  sequences of inserts, pauses, resumes and ticks.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from engine_support import NOW, date_trigger, hours, make_table, minutes, runs_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tocsin.service import Tocsin

SIX = (
    "already_fired",
    "missing_schedule_value",
    "invalid_schedule_value",
    "scheduled_for_future",
    "when_filter_mismatch",
    "due_now",
)
DAY = timedelta(days=1)


def _cell(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M")


def _arm(t: Tocsin, table_id: str, now: datetime, limit: int = 1000) -> dict[str, Any]:
    doc = t.preview(table_id, now=now, record_limit=limit)
    [arm] = doc["triggers"]
    _check_invariants(arm, int(doc["live_records"]))
    return dict(arm)


def _check_invariants(arm: dict[str, Any], live: int) -> None:
    """SPEC §7: exactly six counts, ``records_scanned`` their sum, ``live_records =
    records_scanned + unscanned``, ``truncated = unscanned > 0``; a paused arm says since when
    and has nothing due now."""
    numbers = {k for k, v in arm.items() if isinstance(v, int) and not isinstance(v, bool)}
    assert numbers == {*SIX, "records_scanned", "unscanned"}, arm
    assert arm["records_scanned"] == sum(arm[k] for k in SIX), arm
    assert live == arm["records_scanned"] + arm["unscanned"], (arm, live)
    assert arm["truncated"] is (arm["unscanned"] > 0), arm
    if arm.get("paused"):
        assert arm["paused_since"] and arm["due_now"] == 0 and arm["warnings"] == ["trigger_paused"]
    else:
        assert "paused_since" not in arm, arm


def test_values_due_during_a_pause_are_consumed_page_by_page_as_one_paused_skip_row(
    tocsin: Tocsin,
) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tid = saved["id"]
    paused_at, resumed_at = NOW + minutes(1), NOW + 3 * DAY
    # creation order = cursor order; record_limit 2: pages [p1, d1] [p2, p3] [d2]
    cells = {
        "p1": NOW + DAY,  # inside the pause
        "d1": resumed_at + hours(1),  # due after the resume
        "p2": NOW + 2 * DAY,
        "p3": resumed_at,  # the resume instant is inside the pause
        "d2": resumed_at + hours(2),
    }
    ids = {
        k: tocsin.insert_record(table_id, {"Due": _cell(at)}, now=NOW)["id"]
        for k, at in cells.items()
    }
    tocsin.pause_trigger(table_id, tid, now=paused_at)

    arm = _arm(tocsin, table_id, NOW + 2 * DAY, limit=2)  # paused: p1 fell due, d1 did not
    assert arm["paused_since"] == "2026-08-27T05:03:13"
    assert (arm["already_fired"], arm["scheduled_for_future"], arm["due_now"]) == (1, 1, 0)
    assert tocsin.tick(now=NOW + 2 * DAY, record_limit=2)["runs_created"] == 0
    assert tocsin.skips(table_id, tid)["total"] == 0  # a paused trigger is not even scanned

    tocsin.resume_trigger(table_id, tid, now=resumed_at)
    at = resumed_at + hours(1)
    arm = _arm(tocsin, table_id, at, limit=2)
    assert (arm["already_fired"], arm["due_now"]) == (1, 1)
    assert tocsin.tick(now=at, record_limit=2)["runs_created"] == 1  # page 1: d1 fires, p1 consumed
    [row] = tocsin.skips(table_id, tid)["items"]
    assert row == {
        "reason": "paused",
        "first_instant": "2026-08-27T05:03:13",
        "last_instant": "2026-08-30T05:02:13",
        "count": 1,
        "count_is_lower_bound": False,
    }
    at += hours(1)
    assert tocsin.tick(now=at, record_limit=2)["runs_created"] == 1  # p2, p3 consumed; d2 fires
    [row] = tocsin.skips(table_id, tid)["items"]
    assert row["count"] == 3 and row["reason"] == "paused"  # the same pause: one row
    fired = {r["record_id"] for r in runs_of(tocsin, table_id)}
    assert fired == {ids["d1"], ids["d2"]}
    later = at + 30 * DAY
    assert tocsin.tick(now=later, record_limit=2)["runs_created"] == 0
    assert tocsin.skips(table_id, tid)["items"][0]["count"] == 3  # consumed once: never again
    arm = _arm(tocsin, table_id, later)
    assert (arm["already_fired"], arm["records_scanned"]) == (5, 5)


def test_a_second_pause_gets_its_own_row(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tid = saved["id"]
    for day in (1, 5):
        tocsin.insert_record(table_id, {"Due": _cell(NOW + day * DAY)}, now=NOW)
    tocsin.pause_trigger(table_id, tid, now=NOW)
    tocsin.resume_trigger(table_id, tid, now=NOW + 2 * DAY)
    tocsin.pause_trigger(table_id, tid, now=NOW + 4 * DAY)
    tocsin.resume_trigger(table_id, tid, now=NOW + 6 * DAY)
    assert tocsin.tick(now=NOW + 7 * DAY)["runs_created"] == 0
    rows = tocsin.skips(table_id, tid)["items"]
    assert [(r["first_instant"], r["count"]) for r in rows] == [
        ("2026-08-31T05:02:13", 1),
        ("2026-08-27T05:02:13", 1),
    ]


# --- the property -----------------------------------------------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(-2 * 24 * 60, 6 * 24 * 60)),  # its Due, minutes
        st.tuples(st.just("pause"), st.just(0)),
        st.tuples(st.just("resume"), st.just(0)),
        st.tuples(st.just("tick"), st.just(0)),
    ),
    min_size=1,
    max_size=12,
)


def _inside(at: datetime, pauses: list[tuple[datetime, datetime]]) -> bool:
    return any(start <= at <= until for start, until in pauses)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=OPS,
    steps=st.lists(st.integers(0, 18 * 60), min_size=12, max_size=12),
    limit=st.integers(1, 4),
)
def test_the_six_counts_hold_across_pause_resume_and_tick(
    tocsin: Tocsin, ops: list[tuple[str, int]], steps: list[int], limit: int
) -> None:
    """After every step the invariants hold; at the end, a value whose fire instant fell inside
    a pause never fired, and each one was consumed once as a ``paused`` skip; every other
    value fired once."""
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tid = saved["id"]
    pauses: list[tuple[datetime, datetime]] = []
    paused_at: datetime | None = None
    dues: dict[str, datetime] = {}
    now = NOW
    try:
        for (op, arg), step in zip(ops, steps, strict=False):
            now += minutes(step)
            if op == "insert":
                due = (NOW + minutes(arg)).replace(second=0, microsecond=0)
                dues[tocsin.insert_record(table_id, {"Due": _cell(due)}, now=now)["id"]] = due
            elif op == "pause":
                tocsin.pause_trigger(table_id, tid, now=now)
                paused_at = paused_at or now
            elif op == "resume":
                tocsin.resume_trigger(table_id, tid, now=now)
                if paused_at is not None:
                    pauses.append((paused_at, now))
                paused_at = None
            else:
                tocsin.tick(now=now, record_limit=limit)
            _arm(tocsin, table_id, now, limit)
        if paused_at is not None:
            tocsin.resume_trigger(table_id, tid, now=now)
            pauses.append((paused_at, now))
        end = NOW + 30 * DAY
        for _ in range(3):  # the rest of the lap, then from the start: every value decided
            tocsin.tick(now=end, record_limit=1000)
        fired = [r["record_id"] for r in runs_of(tocsin, table_id)]
        assert len(fired) == len(set(fired))
        in_pause = {rid for rid, due in dues.items() if _inside(due, pauses)}
        assert set(fired) == set(dues) - in_pause
        skipped = sum(int(r["count"]) for r in tocsin.skips(table_id, tid, limit=500)["items"])
        assert skipped == len(in_pause)
        arm = _arm(tocsin, table_id, end)
        assert arm["already_fired"] == arm["records_scanned"] and arm["due_now"] == 0
    finally:
        tocsin.trash_table(table_id, now=NOW)
