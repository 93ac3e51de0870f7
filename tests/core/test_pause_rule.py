"""The pause rule (``core.schedules.pause``): an instant inside a pause, bounds included, never
fires; a paused schedule's decision at resume and a date trigger's paused values are skipped
through it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tocsin.core.schedules import pause
from tocsin.core.schedules.decide import State, Timing, cron_trigger, decide

NINE = datetime(2026, 3, 2, 9, tzinfo=UTC)
HOUR = timedelta(hours=1)


def _never(*args: object) -> list[object]:
    raise AssertionError("nothing owed: nothing counted")


def test_an_instant_inside_a_pause_bounds_included_is_paused() -> None:
    pauses = [(NINE, NINE + HOUR), (NINE + 3 * HOUR, NINE + 4 * HOUR)]
    assert pause.pause_of(pauses, NINE) == pauses[0]
    assert pause.pause_of(pauses, NINE + HOUR) == pauses[0]
    assert pause.pause_of(pauses, NINE + 2 * HOUR) is None
    assert pause.pause_of(pauses, NINE + 4 * HOUR) == pauses[1]
    assert pause.pauses_at(pauses, None, NINE) == tuple(pauses)
    now = NINE + 6 * HOUR
    assert pause.pauses_at(pauses, now - HOUR, now)[-1] == (now - HOUR, now)


def test_the_decision_at_resume_and_the_date_values_skip_through_one_rule() -> None:
    hourly = Timing("s", cron_trigger("0 * * * *", "UTC"), paused=True)
    now = NINE + 3 * HOUR + timedelta(minutes=30)
    [owed] = decide(hourly, State(NINE), (), now).skips
    same = pause.paused_range(("schedule", "s", None), NINE, NINE + 3 * HOUR, 4, NINE - HOUR)
    assert owed == same
    values = pause.value_skips("tab", "due", (NINE, now), 4)
    assert (values.reason, values.first, values.last, values.count) == ("paused", NINE, now, 4)
    assert values.after == now and values.table_id == "tab"
    assert (
        pause.owed_pause(None, now) is None
        and pause.owed_skips(_never, ("k", "s"), now, now, NINE) == []
    )
