"""A table clock trigger (interval, daily, cron) is decided by the one decision (``core.decide``)
under seed 000's fixed policies, and decides as seed 000's rules say (SPEC §4.2–4.4, §5.3):
Hypothesis drives random triggers (zones with DST, anchors, tick instants, pauses, active runs)
through the decision and through a brute-force reference of those rules, written here from the
SPEC (windows found minute by minute or slot by slot with the standard library's zoneinfo). The
second part: a table cron trigger and a workflow schedule of the same cron decide the same fire
instants and skip reasons under pause, downtime and a DST gap (where their policies coincide)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.decide import (
    Decision,
    State,
    Timing,
    cron_trigger,
    decide,
    table_state,
    table_timing,
)
from tocsin.core.schedules.spec import ClockSchedule, parse_schedule

MINUTE = timedelta(minutes=1)
TICK = timedelta(microseconds=1)
DAY = timedelta(days=1)
#: a zone and the eve of one of its DST transitions (spring forward, fall back; Lord Howe's
#: shift by 30 minutes), or a zone without DST
ZONED_DAYS = (
    ("Europe/Berlin", datetime(2026, 3, 28, tzinfo=UTC)),
    ("Europe/Berlin", datetime(2026, 10, 24, tzinfo=UTC)),
    ("America/New_York", datetime(2026, 3, 7, tzinfo=UTC)),
    ("America/New_York", datetime(2026, 10, 31, tzinfo=UTC)),
    ("Australia/Lord_Howe", datetime(2026, 4, 4, tzinfo=UTC)),
    ("Australia/Lord_Howe", datetime(2026, 10, 3, tzinfo=UTC)),
    ("Asia/Kolkata", datetime(2026, 3, 28, tzinfo=UTC)),
    ("UTC", datetime(2026, 10, 24, tzinfo=UTC)),
)
#: (minute field, hour field): every expression fires at least once a day
CRONS = (("0", "9"), ("30", "2"), ("*/20", "*"), ("15", "1-3"), ("0", "*/6"), ("45", "23"))
INTERVALS = (60, 300, 900, 3600, 5400, 86400)
Range = tuple[str, datetime, datetime, int, datetime | None]


# --- the reference: seed 000's rules, brute force --------------------------------------------


def _field(spec: str, value: int) -> bool:
    if spec == "*":
        return True
    if spec.startswith("*/"):
        return value % int(spec[2:]) == 0
    if "-" in spec:
        low, high = spec.split("-")
        return int(low) <= value <= int(high)
    return value == int(spec)


def reference_windows(raw: dict[str, Any], anchor: datetime, end: datetime) -> list[datetime]:
    """Every window of the trigger from its anchor up to ``end``: interval ``anchor + n × every``;
    daily one slot per local date, a wall time read with fold=0 (a gap's slot late by the gap, a
    fold's at its first occurrence), slots at or after the anchor; cron the minutes whose local
    wall time matches (a repeated wall time once, at its first occurrence), after the anchor."""
    kind = raw["type"]
    if kind == "interval":
        step = timedelta(seconds=raw["every_seconds"])
        return [anchor + n * step for n in range((end - anchor) // step + 1)]
    zone = ZoneInfo(raw.get("timezone", "UTC"))
    if kind == "daily":
        wall = time.fromisoformat(raw["at"])
        day: date = anchor.astimezone(zone).date() - timedelta(days=1)
        out = []
        while day <= end.astimezone(zone).date() + timedelta(days=1):
            slot = datetime.combine(day, wall, tzinfo=zone).astimezone(UTC)
            if anchor <= slot <= end:
                out.append(slot)
            day += timedelta(days=1)
        return out
    minute, hour = raw["expression"].split()[:2]
    at = anchor.replace(second=0, microsecond=0) + MINUTE
    out = []
    while at <= end:
        local = at.astimezone(zone)
        if local.fold == 0 and _field(minute, local.minute) and _field(hour, local.hour):
            out.append(at)
        at += MINUTE
    return out


def _offset(at: datetime, zone: ZoneInfo) -> timedelta:
    offset = at.astimezone(zone).utcoffset()
    assert offset is not None
    return offset


def gaps_between(raw: dict[str, Any], since: datetime, until: datetime) -> list[Range]:
    """The spring-forward transitions in ``(since, until]`` with the number of the cron's wall
    times each gap swallowed (those never fire): ``dst_gap`` ranges."""
    zone = ZoneInfo(raw.get("timezone", "UTC"))
    minute, hour = raw["expression"].split()[:2]
    out: list[Range] = []
    at = since.replace(second=0, microsecond=0) + MINUTE
    while at <= until:
        before, after = _offset(at - MINUTE, zone), _offset(at, zone)
        if after > before and at > since:
            wall, walls = (at + before).replace(tzinfo=None), 0
            while wall < (at + after).replace(tzinfo=None):
                walls += _field(minute, wall.minute) and _field(hour, wall.hour)
                wall += MINUTE
            if walls:
                out.append(("dst_gap", at, at, walls, None))
        at += MINUTE
    return out


@dataclass
class Reference:
    """Seed 000's rules over a trigger's windows: ``last`` consumed, ``mark`` (its next due
    instant: how far skips are recorded)."""

    raw: dict[str, Any]
    anchor: datetime
    windows: list[datetime]
    last: datetime | None = None
    mark: datetime | None = None
    fires: list[datetime] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mark = self.after(None)

    def after(self, at: datetime | None) -> datetime | None:
        return next((w for w in self.windows if at is None or w > at), None)

    def span(self, reason: str, first: datetime, last: datetime) -> list[Range]:
        found = [w for w in self.windows if first <= w <= last]
        if not found:
            return []
        before = [w for w in self.windows if w < found[0]]
        return [(reason, found[0], found[-1], len(found), before[-1] if before else None)]

    def tick(self, now: datetime, active: bool) -> list[Range]:
        """One tick at ``now``: the latest window after the last consumed one fires (the
        windows it replaced since the mark: ``coalesced``; a cron's gaps since the last consumed
        window: ``dst_gap``); a run still active holds it (the windows it replaced since the
        mark: ``active_run``, the mark moves onto it)."""
        owed = [w for w in self.windows if w <= now and (self.last is None or w > self.last)]
        if not owed:
            self.mark = self.after(self.last)
            return []
        due, mark = owed[-1], self.mark
        assert mark is not None
        if active:
            self.mark = due
            return self.span("active_run", mark, due - TICK) if mark < due else []
        out = self.span("coalesced", mark, due - TICK) if mark < due else []
        if self.raw["type"] == "cron":
            out += gaps_between(self.raw, self.last or self.anchor, due)
        self.fires.append(due)
        self.last, self.mark = due, self.after(due)
        return out

    def resume(self, now: datetime) -> list[Range]:
        """A resume at ``now``: the windows the pause kept from firing (from the mark up to the
        latest one ``<= now``) are ``paused`` and consumed; the next one fires."""
        owed = [w for w in self.windows if w <= now and (self.last is None or w > self.last)]
        if not owed:
            self.mark = self.after(self.last)
            return []
        assert self.mark is not None
        out = self.span("paused", self.mark, owed[-1])
        self.last, self.mark = owed[-1], self.after(owed[-1])
        return out


# --- the decision, as the tick applies it ------------------------------------------------------


@dataclass
class Decided:
    """A table trigger's state row moved by the one decision, as the tick and the resume do."""

    spec: ClockSchedule
    anchor: datetime
    next_due_at: datetime | None
    last: datetime | None = None
    fires: list[datetime] = field(default_factory=list)

    def decide(self, now: datetime, *, active: bool, paused: bool) -> Decision:
        timing = table_timing(self.spec, self.anchor, paused=paused)
        state = table_state(timing, self.next_due_at, self.last, active_run=active)
        return decide(timing, state, (), now)

    def tick(self, now: datetime, active: bool) -> list[Range]:
        d = self.decide(now, active=active, paused=False)
        if d.fires:
            self.fires += d.fires
            self.last = d.fires[-1]
        self.next_due_at = d.next_due_at
        return ranges(d)

    def resume(self, now: datetime) -> list[Range]:
        d = self.decide(now, active=False, paused=True)
        if d.skips:
            self.last = d.state.consumed
        self.next_due_at = d.next_due_at
        return ranges(d)


def ranges(d: Decision) -> list[Range]:
    return [(r.reason, r.first, r.last, r.count, r.after) for r in d.skips]


def normal(found: list[Range]) -> list[Range]:
    """Gaps carry no merge point; ranges in time order."""
    return sorted(
        (r if r[0] != "dst_gap" else (*r[:4], None) for r in found), key=lambda r: (r[1], r[0])
    )


raw_trigger = st.one_of(
    st.builds(lambda s: {"type": "interval", "every_seconds": s}, st.sampled_from(INTERVALS)),
    st.builds(
        lambda h, m: {"type": "daily", "at": f"{h:02d}:{m:02d}"},
        st.sampled_from((0, 1, 2, 3, 9, 23)),
        st.sampled_from((0, 30, 59)),
    ),
    st.builds(
        lambda mh: {"type": "cron", "expression": f"{mh[0]} {mh[1]} * * *"},
        st.sampled_from(CRONS),
    ),
)
steps = st.lists(
    st.tuples(
        st.sampled_from((1, 7, 20, 59, 60, 61, 150, 600, 1440, 2000)),  # minutes on
        st.integers(0, 59),  # seconds on
        st.sampled_from(("tick", "tick", "tick", "pause", "resume")),
        st.booleans(),  # a run of the trigger still pending or running
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=200, deadline=None)
@given(
    raw=raw_trigger,
    zoned=st.sampled_from(ZONED_DAYS),
    start=st.integers(0, 36 * 60),
    seconds=st.integers(0, 59),
    plan=steps,
)
def test_a_table_clock_trigger_decides_as_seed_000s_rules(
    raw: dict[str, Any],
    zoned: tuple[str, datetime],
    start: int,
    seconds: int,
    plan: list[tuple[int, int, str, bool]],
) -> None:
    zone, day = zoned
    raw = raw if raw["type"] == "interval" else {**raw, "timezone": zone}
    spec = parse_schedule(raw, {})
    assert not isinstance(spec, type(None))
    anchor = day + timedelta(minutes=start, seconds=seconds)
    end = anchor + sum((timedelta(minutes=m, seconds=s) for m, s, _, _ in plan), timedelta())
    ref = Reference(raw, anchor, reference_windows(raw, anchor, end + 2 * DAY))
    new = Decided(spec, anchor, ref.mark)  # type: ignore[arg-type]
    now, paused = anchor, False
    for minutes_on, seconds_on, action, active in plan:
        now += timedelta(minutes=minutes_on, seconds=seconds_on)
        if action == "pause":
            paused = True
        elif action == "resume" and paused:
            paused = False
            assert normal(new.resume(now)) == normal(ref.resume(now))
        elif action == "tick" and not paused:  # a paused trigger is never planned
            assert normal(new.tick(now, active)) == normal(ref.tick(now, active))
        assert new.fires == ref.fires
        assert new.next_due_at == ref.mark, (action, now)


# --- a table cron trigger and a workflow schedule of the same cron ---------------------------

BERLIN = "Europe/Berlin"
SAVED = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)  # the eve of Berlin's spring forward


def _table_and_schedule() -> tuple[Decided, Timing, State]:
    raw = {"type": "cron", "expression": "30 2 * * *", "timezone": BERLIN}
    spec = parse_schedule(raw, {})
    table = Decided(spec, SAVED, None)  # type: ignore[arg-type]
    table.next_due_at = table.decide(SAVED, active=False, paused=False).next_due_at
    timing = Timing("wf", cron_trigger("30 2 * * *", BERLIN), "latest", overlap="allow")
    return table, timing, State(table.next_due_at)


def _shape(found: list[Range]) -> list[tuple[str, datetime, datetime, int]]:
    return sorted((r[0], r[1], r[2], r[3]) for r in found)


def test_a_table_cron_trigger_and_a_workflow_schedule_decide_alike() -> None:
    """The same cron in a DST zone, side by side: downtime across Berlin's spring forward (02:30
    never exists that night), a pause over three instants, a resume, on-time ticks."""
    table, timing, state = _table_and_schedule()
    paused = False
    script = [
        (datetime(2026, 3, 31, 8, 0, tzinfo=UTC), "tick"),  # down since Saturday: 2 owed, 1 gap
        (datetime(2026, 4, 1, 0, 31, tzinfo=UTC), "tick"),  # on time
        (datetime(2026, 4, 1, 6, 0, tzinfo=UTC), "pause"),
        (datetime(2026, 4, 4, 12, 0, tzinfo=UTC), "resume"),  # 3 instants paused
        (datetime(2026, 4, 5, 0, 30, tzinfo=UTC), "tick"),
        (datetime(2026, 4, 9, 0, 30, tzinfo=UTC), "tick"),  # 3 coalesced
    ]
    fired_table: list[datetime] = []
    fired_schedule: list[datetime] = []
    reasons: list[tuple[str, int]] = []
    for now, action in script:
        if action == "pause":
            paused = True
            continue
        workflow_timing = Timing(
            timing.id, timing.trigger, "latest", overlap="allow", paused=paused
        )
        d = decide(workflow_timing, state, (), now)
        state = d.state
        fired_schedule += d.fires
        found = table.resume(now) if action == "resume" else table.tick(now, active=False)
        paused = False
        assert _shape(found) == _shape(ranges(d)), now
        reasons += [(r[0], r[3]) for r in _shape(found)]
        fired_table = table.fires
    assert reasons == [("coalesced", 1), ("dst_gap", 1), ("paused", 3), ("coalesced", 3)]
    assert (
        fired_table
        == fired_schedule
        == [
            datetime(2026, 3, 31, 0, 30, tzinfo=UTC),
            datetime(2026, 4, 1, 0, 30, tzinfo=UTC),
            datetime(2026, 4, 5, 0, 30, tzinfo=UTC),
            datetime(2026, 4, 9, 0, 30, tzinfo=UTC),
        ]
    )


def test_a_decision_asked_before_the_last_consumed_instant_keeps_the_next_one() -> None:
    """A preview on a clock behind the tick's (the Studio's real clock after a tick at a later
    ``now``) never reports an instant already taken as the next fire."""
    raw = {"type": "cron", "expression": "0 0 1 1 *", "timezone": "UTC"}
    spec = parse_schedule(raw, {})
    assert isinstance(spec, ClockSchedule)
    anchor = datetime(2026, 6, 1, tzinfo=UTC)
    consumed = datetime(2027, 1, 1, tzinfo=UTC)
    timing = table_timing(spec, anchor, paused=False)
    state = table_state(timing, datetime(2028, 1, 1, tzinfo=UTC), consumed, active_run=False)
    for now in (datetime(2026, 12, 4, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC)):
        decision = decide(timing, state, (), now)
        assert decision.fires == ()
        assert decision.next_due_at == datetime(2028, 1, 1, tzinfo=UTC)
    plain = Timing("s", cron_trigger("0 0 1 1 *", "UTC"))
    ahead = State(datetime(2028, 1, 1, tzinfo=UTC))
    assert decide(plain, ahead, (), datetime(2026, 12, 4, tzinfo=UTC)).next_due_at == datetime(
        2028, 1, 1, tzinfo=UTC
    )
