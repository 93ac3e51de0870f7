"""Table-driven DST tests of tocsin.core.time.cron (SPEC §4.4 fold/gap policy, §13 ``repeated``).

Every expectation is an ``.isoformat()`` string in the zone, so the offset shows (STYLE R11).
A nonexistent wall time (gap) never fires; a repeated one (fold) fires once at its first
occurrence under ``repeated="first"`` and at both occurrences under ``"both"``.

Transitions, 2025 and 2026 (last wall time before -> first wall time after):

America/New_York (EST -05:00 / EDT -04:00), at 02:00 local:
  2025-03-09  01:59-05:00 -> 03:00-04:00   gap 02:00-02:59
  2025-11-02  01:59-04:00 -> 01:00-05:00   fold 01:00-01:59
  2026-03-08  01:59-05:00 -> 03:00-04:00   gap 02:00-02:59
  2026-11-01  01:59-04:00 -> 01:00-05:00   fold 01:00-01:59
Europe/London (GMT +00:00 / BST +01:00), at 01:00 UTC:
  2025-03-30  00:59+00:00 -> 02:00+01:00   gap 01:00-01:59
  2025-10-26  01:59+01:00 -> 01:00+00:00   fold 01:00-01:59
  2026-03-29  00:59+00:00 -> 02:00+01:00   gap 01:00-01:59
  2026-10-25  01:59+01:00 -> 01:00+00:00   fold 01:00-01:59
Australia/Lord_Howe (+10:30 / +11:00, a 30-minute shift):
  2025-04-06  01:59+11:00 -> 01:30+10:30   fold 01:30-01:59
  2025-10-05  01:59+10:30 -> 02:30+11:00   gap 02:00-02:29
  2026-04-05  01:59+11:00 -> 01:30+10:30   fold 01:30-01:59
  2026-10-04  01:59+10:30 -> 02:30+11:00   gap 02:00-02:29
Pacific/Chatham (+12:45 / +13:45):
  2025-04-06  03:44+13:45 -> 02:45+12:45   fold 02:45-03:44
  2025-09-28  02:44+12:45 -> 03:45+13:45   gap 02:45-03:44
  2026-04-05  03:44+13:45 -> 02:45+12:45   fold 02:45-03:44
  2026-09-27  02:44+12:45 -> 03:45+13:45   gap 02:45-03:44
America/Sao_Paulo (-03:00): no DST since 2019 — no transition in 2025 or 2026.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice, pairwise
from zoneinfo import ZoneInfo

import pytest

from tocsin.core.time.cron import CronSpec, iter_after, parse, prev_at_or_before

BOTH_POLICIES = ("first", "both")


def fires(expr: str, zone: str, start: str, repeated: str, count: int) -> list[str]:
    """The first ``count`` fires after the local ISO instant ``start``, as local ISO strings."""
    spec = parse(expr, dialect="extended" if len(expr.split()) > 5 else "strict")
    after = datetime.fromisoformat(start)
    found = islice(iter_after(spec, after, tz=zone, repeated=repeated), count)  # type: ignore[arg-type]
    return [fire.astimezone(ZoneInfo(zone)).isoformat() for fire in found]


# (zone, expression, start, repeated, expected fires) — gaps: identical under both policies.
GAPS = [
    ("America/New_York", "30 2 * * *", "2025-03-08T12:00-05:00",
     ["2025-03-10T02:30:00-04:00", "2025-03-11T02:30:00-04:00"]),
    ("America/New_York", "*/20 * * * *", "2025-03-09T01:30-05:00",
     ["2025-03-09T01:40:00-05:00", "2025-03-09T03:00:00-04:00", "2025-03-09T03:20:00-04:00"]),
    ("America/New_York", "30 2 * * *", "2026-03-07T12:00-05:00",
     ["2026-03-09T02:30:00-04:00"]),
    ("Europe/London", "30 1 * * *", "2025-03-29T12:00+00:00",
     ["2025-03-31T01:30:00+01:00"]),
    ("Europe/London", "0 * * * *", "2026-03-29T00:00+00:00",
     ["2026-03-29T02:00:00+01:00", "2026-03-29T03:00:00+01:00"]),
    ("Australia/Lord_Howe", "15 2 * * *", "2025-10-04T12:00+10:30",
     ["2025-10-06T02:15:00+11:00"]),
    ("Australia/Lord_Howe", "*/10 2 * * *", "2025-10-05T01:55+10:30",
     ["2025-10-05T02:30:00+11:00", "2025-10-05T02:40:00+11:00", "2025-10-05T02:50:00+11:00"]),
    ("Australia/Lord_Howe", "29 2 * * *", "2026-10-03T12:00+10:30",
     ["2026-10-05T02:29:00+11:00"]),
    ("Pacific/Chatham", "0 3 * * *", "2025-09-27T12:00+12:45",
     ["2025-09-29T03:00:00+13:45"]),
    ("Pacific/Chatham", "45 3 * * *", "2026-09-26T12:00+12:45",
     ["2026-09-27T03:45:00+13:45"]),
    ("America/New_York", "30 30 2 * * *", "2026-03-08T01:59:59-05:00",
     ["2026-03-09T02:30:30-04:00"]),
]  # fmt: skip


@pytest.mark.parametrize("repeated", BOTH_POLICIES)
@pytest.mark.parametrize(("zone", "expr", "start", "expected"), GAPS)
def test_a_nonexistent_wall_time_never_fires(
    zone: str, expr: str, start: str, expected: list[str], repeated: str
) -> None:
    assert fires(expr, zone, start, repeated, len(expected)) == expected


# (zone, expression, start, fires under "first", fires under "both")
FOLDS = [
    ("America/New_York", "30 1 * * *", "2025-11-01T12:00-04:00",
     ["2025-11-02T01:30:00-04:00", "2025-11-03T01:30:00-05:00"],
     ["2025-11-02T01:30:00-04:00", "2025-11-02T01:30:00-05:00", "2025-11-03T01:30:00-05:00"]),
    ("America/New_York", "*/30 * * * *", "2026-11-01T00:45-04:00",
     ["2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"],
     ["2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00",
      "2026-11-01T01:30:00-05:00", "2026-11-01T02:00:00-05:00"]),
    ("Europe/London", "30 1 * * *", "2025-10-25T12:00+01:00",
     ["2025-10-26T01:30:00+01:00", "2025-10-27T01:30:00+00:00"],
     ["2025-10-26T01:30:00+01:00", "2025-10-26T01:30:00+00:00", "2025-10-27T01:30:00+00:00"]),
    ("Europe/London", "59 1 * * *", "2026-10-24T12:00+01:00",
     ["2026-10-25T01:59:00+01:00", "2026-10-26T01:59:00+00:00"],
     ["2026-10-25T01:59:00+01:00", "2026-10-25T01:59:00+00:00", "2026-10-26T01:59:00+00:00"]),
    ("Australia/Lord_Howe", "45 1 * * *", "2025-04-05T12:00+11:00",
     ["2025-04-06T01:45:00+11:00", "2025-04-07T01:45:00+10:30"],
     ["2025-04-06T01:45:00+11:00", "2025-04-06T01:45:00+10:30", "2025-04-07T01:45:00+10:30"]),
    ("Australia/Lord_Howe", "15 1 * * *", "2026-04-04T12:00+11:00",
     ["2026-04-05T01:15:00+11:00", "2026-04-06T01:15:00+10:30"],
     ["2026-04-05T01:15:00+11:00", "2026-04-06T01:15:00+10:30"]),
    ("Pacific/Chatham", "0 3 * * *", "2025-04-05T12:00+13:45",
     ["2025-04-06T03:00:00+13:45", "2025-04-07T03:00:00+12:45"],
     ["2025-04-06T03:00:00+13:45", "2025-04-06T03:00:00+12:45", "2025-04-07T03:00:00+12:45"]),
    ("Pacific/Chatham", "44 2,3 * * *", "2026-04-05T02:00+13:45",
     ["2026-04-05T02:44:00+13:45", "2026-04-05T03:44:00+13:45", "2026-04-06T02:44:00+12:45"],
     ["2026-04-05T02:44:00+13:45", "2026-04-05T03:44:00+13:45", "2026-04-05T03:44:00+12:45",
      "2026-04-06T02:44:00+12:45"]),
    ("America/New_York", "0 30 1 * * *", "2025-11-02T01:30:00-04:00",
     ["2025-11-03T01:30:00-05:00"],
     ["2025-11-02T01:30:00-05:00", "2025-11-03T01:30:00-05:00"]),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "expr", "start", "first", "both"), FOLDS)
def test_a_repeated_wall_time_fires_once_or_twice(
    zone: str, expr: str, start: str, first: list[str], both: list[str]
) -> None:
    assert fires(expr, zone, start, "first", len(first)) == first
    assert fires(expr, zone, start, "both", len(both)) == both


# (zone, expression, at (UTC), latest fire under "first", under "both")
PREVIOUS = [
    # 06:45Z is 01:45-05:00, the second pass through 01:00-01:59 in New York.
    ("America/New_York", "30 1 * * *", "2025-11-02T06:45:00+00:00",
     "2025-11-02T01:30:00-04:00", "2025-11-02T01:30:00-05:00"),
    ("America/New_York", "30 2 * * *", "2025-03-09T16:00:00+00:00",
     "2025-03-08T02:30:00-05:00", "2025-03-08T02:30:00-05:00"),
    ("Australia/Lord_Howe", "40 1 * * *", "2026-04-04T15:20:00+00:00",
     "2026-04-05T01:40:00+11:00", "2026-04-05T01:40:00+10:30"),
    ("Pacific/Chatham", "50 2 * * *", "2025-09-27T18:00:00+00:00",
     "2025-09-27T02:50:00+12:45", "2025-09-27T02:50:00+12:45"),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "expr", "at", "first", "both"), PREVIOUS)
def test_prev_at_or_before_applies_the_same_policy(
    zone: str, expr: str, at: str, first: str, both: str
) -> None:
    spec, moment = parse(expr), datetime.fromisoformat(at)
    for repeated, expected in (("first", first), ("both", both)):
        fire = prev_at_or_before(spec, moment, tz=zone, repeated=repeated)  # type: ignore[arg-type]
        assert fire is not None
        assert fire.astimezone(ZoneInfo(zone)).isoformat() == expected


@pytest.mark.parametrize("year", [2025, 2026])
def test_sao_paulo_has_no_transition(year: int) -> None:
    """Brazil abolished DST in 2019: every daily fire of the year is at -03:00, none skipped."""
    zone = ZoneInfo("America/Sao_Paulo")
    start = datetime(year, 1, 1, tzinfo=UTC)
    offsets = {(start + timedelta(hours=h)).astimezone(zone).utcoffset() for h in range(0, 8760, 6)}
    assert offsets == {timedelta(hours=-3)}
    found = list(islice(iter_after(parse("0 0 * * *"), start, tz=zone), 365))
    assert [f.astimezone(zone).isoformat()[10:] for f in found] == ["T00:00:00-03:00"] * 365
    assert all(b - a == timedelta(days=1) for a, b in pairwise(found))


# (zone, expression, after (UTC), the next fire, the fire before it) — rare fires, found across
# many transitions (the search skips the segments in between).
RARE = [
    ("America/New_York", "30 2 29 2 *", "2025-01-01T00:00:00+00:00",
     "2028-02-29T02:30:00-05:00", "2024-02-29T02:30:00-05:00"),
    ("Europe/London", "0 0 0 1 1 ? 2150", "2026-08-27T05:02:13+00:00",
     "2150-01-01T00:00:00+00:00", None),
    ("Australia/Lord_Howe", "0 0 * 2 1#5", "2026-08-27T05:02:13+00:00",
     "2044-02-29T00:00:00+11:00", "2016-02-29T00:00:00+11:00"),
    ("Pacific/Chatham", "15 3 * * 0#1", "2025-09-07T12:00:00+00:00",
     "2025-10-05T03:15:00+13:45", "2025-09-07T03:15:00+12:45"),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "expr", "after", "following", "preceding"), RARE)
def test_rare_fires_are_found_across_many_transitions(
    zone: str, expr: str, after: str, following: str, preceding: str | None
) -> None:
    spec = parse(expr, dialect="extended")
    moment, tz = datetime.fromisoformat(after), ZoneInfo(zone)
    fire = next_after_in(spec, moment, zone)
    assert fire is not None and fire.astimezone(tz).isoformat() == following
    before = prev_at_or_before(spec, fire - timedelta(seconds=1), tz=zone)
    assert (before and before.astimezone(tz).isoformat()) == preceding
    assert prev_at_or_before(spec, fire, tz=zone) == fire


def next_after_in(spec: CronSpec, moment: datetime, zone: str) -> datetime | None:
    return next(iter_after(spec, moment, tz=zone), None)
