"""A backfill is the tick's decision caught up in full: for random cron schedules in zones with
DST transitions and random windows around those transitions, the instants a backfill of
``[start, end)`` runs are exactly those the tick fires over the same window (a schedule created
just before ``start`` with ``catch_up="all"``, ticked at random instants and just before
``end``), and the skip ranges it records (``dst_gap``) are the tick's from ``start`` on. Few
examples (a fresh facade per example on one database); both backends."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tocsin import step, workflow
from tocsin.core.time.instants import to_iso
from tocsin.service import Tocsin
from tocsin.settings import Settings

ZONES = st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe"])
CRONS = st.sampled_from(["*/30 * * * *", "30 2 * * *", "0 1-3 * * *", "15 2 * * 0", "0 */6 * * *"])
#: DST transitions of those zones (spring forward and fall back) the windows are drawn around
TRANSITIONS = st.sampled_from(
    [
        datetime(2027, 3, 28, 1, tzinfo=UTC),  # Europe/Paris forward
        datetime(2027, 10, 31, 1, tzinfo=UTC),  # Europe/Paris back
        datetime(2027, 3, 14, 7, tzinfo=UTC),  # America/New_York forward
        datetime(2027, 11, 7, 6, tzinfo=UTC),  # America/New_York back
        datetime(2027, 10, 2, 15, 30, tzinfo=UTC),  # Australia/Lord_Howe forward (30 min)
    ]
)
MICRO = timedelta(microseconds=1)


def _noop(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return data


def _scheduled(t: Tocsin, sid: str, trigger: str) -> list[str]:
    runs = t.workflow_runs(workflow_id="dry", limit=500)["items"]
    return sorted(
        to_iso(r["scheduled_for"])
        for r in runs
        if r["schedule_id"] == sid and r["trigger"] == trigger
    )


def _skips(t: Tocsin, sid: str, since: datetime) -> list[tuple[str, str, str, int]]:
    items = t.schedules.skips(sid, limit=500)["items"]
    return sorted(
        (s["reason"], s["first_instant"], s["last_instant"], s["count"])
        for s in items
        if s["first_instant"] >= to_iso(since)
    )


@settings(
    max_examples=6,
    phases=[Phase.explicit, Phase.generate],  # reported as drawn: shrinking a store takes minutes
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cron=CRONS,
    zone=ZONES,
    around=TRANSITIONS,
    offset=st.integers(-36 * 60, 12 * 60),
    length=st.integers(60, 3 * 24 * 60),
    ticks=st.lists(st.floats(0, 1, exclude_max=True), max_size=4),
)
def test_a_backfill_runs_and_skips_what_the_tick_fires_over_its_window(
    store_url: str,
    settings: Settings,
    cron: str,
    zone: str,
    around: datetime,
    offset: int,
    length: int,
    ticks: list[float],
) -> None:
    start = around + timedelta(minutes=offset)
    end = start + timedelta(minutes=length)
    t = Tocsin.open(store_url, settings=settings)
    made: list[str] = []
    try:
        name = f"dry-{uuid.uuid4().hex[:8]}"
        t.register_workflows([workflow(id="dry").then(step(id=name)(_noop)).commit()])
        spec = {"workflow_id": "dry", "cron": cron, "timezone": zone, "overlap": "allow"}
        ticked = t.schedules.create(**spec, catch_up="all", max_catch_up=10_000, now=start - MICRO)
        made.append(ticked["id"])
        for at in sorted({start + (end - start) * f for f in ticks} | {end - MICRO}):
            t.tick(now=at)
        backfilled = t.schedules.create(**spec, now=end)  # never due before ``end``
        made.append(backfilled["id"])
        out = t.schedules.backfill(backfilled["id"], start, end, now=end)

        fired = _scheduled(t, ticked["id"], "scheduled")
        assert _scheduled(t, backfilled["id"], "backfill") == fired
        assert out == {"instants": len(fired), "created": len(fired), "existing": 0}
        assert _skips(t, backfilled["id"], start) == _skips(t, ticked["id"], start)
    finally:
        for sid in made:
            t.schedules.delete(sid)
        t.close()
