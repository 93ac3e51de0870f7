"""The tick and the preview share one evaluator, so they cannot disagree (STYLE R3, SPEC §7).

For generated setups (records, a date trigger, a clock trigger, earlier ticks whose runs ended
``done``, ``failed`` or stayed pending): when the preview says ``due_now`` for a trigger, the
next tick at the same instant creates exactly that many runs for it; when it says nothing is
due for a clock trigger, the tick creates none. Afterwards ``already_fired`` has absorbed
``due_now`` (for tables that fit in one page).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engine_support import (
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    make_table,
    runs_of,
    write_raw_cells,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tocsin.service import Tocsin

CELLS = st.one_of(
    st.none(),
    st.sampled_from(["garbage", "9999-12-31T23:59", "0001-01-01T00:00"]),
    st.integers(-3 * 24 * 60, 3 * 24 * 60).map(
        lambda m: (NOW + timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M")
    ),
)
CLOCKS = st.one_of(
    st.sampled_from([60, 3600, 86400]).map(lambda s: {"type": "interval", "every_seconds": s}),
    st.builds(
        lambda h, m, tz: {"type": "daily", "at": f"{h:02d}:{m:02d}"} | tz,
        st.integers(0, 23),
        st.integers(0, 59),
        st.sampled_from([{}, {"timezone": "Asia/Taipei"}, {"timezone": "America/New_York"}]),
    ),
    st.sampled_from(["*/15 * * * *", "0 9 * * *", "30 2 * * 1-5", "0 0 1 * *"]).map(
        lambda e: {"type": "cron", "expression": e}
    ),
)
PRE_TICKS = st.lists(
    st.tuples(st.integers(0, 2 * 24 * 60), st.sampled_from(["done", "failed", None])),
    max_size=3,
)


def _created(t: Tocsin, table_id: str, trigger_id: str) -> int:
    return len(runs_of(t, table_id, trigger_id))


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cells=st.lists(CELLS, max_size=10),
    offset=st.integers(-1440, 1440),
    clock=CLOCKS,
    pre_ticks=PRE_TICKS,
    extra=st.integers(0, 2 * 24 * 60),
    limit=st.integers(1, 12),
)
def test_preview_due_now_is_what_the_next_tick_creates(
    tocsin: Tocsin,
    cells: list[Any],
    offset: int,
    clock: dict[str, Any],
    pre_ticks: list[tuple[int, str | None]],
    extra: int,
    limit: int,
) -> None:
    table_id = make_table(tocsin)
    for cell in cells:
        record = tocsin.insert_record(table_id, {"Status": "Open"}, now=NOW)
        write_raw_cells(tocsin, table_id, record["id"], {"Due": cell, "Status": "Open"}, now=NOW)
    dated, clocked = tocsin.set_triggers(
        table_id, [date_trigger(offset=offset), clock_trigger(clock)], now=NOW
    )
    last = 0
    for delta, outcome in sorted(pre_ticks, key=lambda p: p[0]):
        tocsin.tick(now=NOW + timedelta(minutes=delta), record_limit=limit)
        if outcome is not None:
            finish_all(tocsin, table_id, outcome, now=NOW + timedelta(minutes=delta))
        last = delta
    now = NOW + timedelta(minutes=last + extra)

    date_arm, clock_arm = tocsin.preview(table_id, now=now, record_limit=limit)["triggers"]
    before = {t["id"]: _created(tocsin, table_id, t["id"]) for t in (dated, clocked)}
    tocsin.tick(now=now, record_limit=limit)
    made = {tid: _created(tocsin, table_id, tid) - n for tid, n in before.items()}

    if date_arm["due_now"]:
        assert made[dated["id"]] == date_arm["due_now"]
    assert made[clocked["id"]] == int(clock_arm["due_now"])
    if len(cells) <= limit:
        again = tocsin.preview(table_id, now=now, record_limit=limit)["triggers"][0]
        assert again["due_now"] == 0
        assert again["already_fired"] == date_arm["already_fired"] + date_arm["due_now"]
