"""Property tests of tocsin.core.time.cron against a brute-force oracle (SPEC §4.4, §13; STYLE R12).

The oracle (``cron_reference``) walks real UTC instants minute by minute (second by second for
6/7 fields) and converts each to wall time; start instants cluster around the 2024-2027 DST
transitions of each zone. Where the oracle finds no fire inside its horizon, the evaluator must
not find one inside it either.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cron_reference import ref_next, ref_prev
from cron_strategies import (
    ZONES,
    extended_expressions,
    instants,
    seconds_expressions,
    strict_expressions,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tocsin.core.time.cron import CronError, CronSpec, next_after, parse, prev_at_or_before

MINUTE_HORIZON = timedelta(days=3)
SECOND_HORIZON = timedelta(hours=2)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POLICIES = st.sampled_from(["first", "both"])


def parsed(expr: str, dialect: str) -> CronSpec:
    try:
        return parse(expr, dialect=dialect)  # type: ignore[arg-type]
    except CronError:
        assume(False)
        raise


def check_next(
    spec: CronSpec, after: datetime, zone: str, repeated: str, horizon: timedelta
) -> None:
    fire = next_after(spec, after, tz=zone, repeated=repeated)  # type: ignore[arg-type]
    expected = ref_next(spec, after, ZoneInfo(zone), repeated, horizon)
    if fire is not None:
        assert fire.tzinfo is UTC
        assert fire > after
    if expected is not None:
        assert fire == expected, (spec.expression, zone, repeated, after.isoformat())
    else:
        assert fire is None or fire > after + horizon, (spec.expression, zone, after.isoformat())


def check_prev(spec: CronSpec, at: datetime, zone: str, repeated: str, horizon: timedelta) -> None:
    fire = prev_at_or_before(spec, at, tz=zone, repeated=repeated)  # type: ignore[arg-type]
    expected = ref_prev(spec, at, ZoneInfo(zone), repeated, horizon)
    if fire is not None:
        assert fire.tzinfo is UTC
        assert fire <= at
    if expected is not None:
        assert fire == expected, (spec.expression, zone, repeated, at.isoformat())
    else:
        assert fire is None or fire < at - horizon, (spec.expression, zone, at.isoformat())


@st.composite
def cases(
    draw: st.DrawFn, expressions: st.SearchStrategy[str], spread: timedelta
) -> tuple[str, str, datetime, str]:
    zone = draw(st.sampled_from(ZONES))
    return draw(expressions), zone, draw(instants(zone, spread)), draw(POLICIES)


@PROPERTY
@given(cases(strict_expressions(), timedelta(days=2)))
def test_next_after_strict_agrees_with_the_oracle(case: tuple[str, str, datetime, str]) -> None:
    expr, zone, after, repeated = case
    check_next(parsed(expr, "strict"), after, zone, repeated, MINUTE_HORIZON)


@PROPERTY
@given(cases(extended_expressions(), timedelta(days=2)))
def test_next_after_extended_agrees_with_the_oracle(case: tuple[str, str, datetime, str]) -> None:
    expr, zone, after, repeated = case
    check_next(parsed(expr, "extended"), after, zone, repeated, MINUTE_HORIZON)


@PROPERTY
@given(cases(seconds_expressions(), timedelta(hours=3)))
def test_next_after_with_seconds_agrees_with_the_oracle(
    case: tuple[str, str, datetime, str],
) -> None:
    expr, zone, after, repeated = case
    check_next(parsed(expr, "extended"), after, zone, repeated, SECOND_HORIZON)


@PROPERTY
@given(cases(strict_expressions() | extended_expressions(), timedelta(days=2)), st.booleans())
def test_prev_at_or_before_agrees_with_the_oracle(
    case: tuple[str, str, datetime, str], extended: bool
) -> None:
    expr, zone, at, repeated = case
    try:
        spec = parse(expr, dialect="extended" if extended else "strict")
    except CronError:
        spec = parsed(expr, "extended")
    check_prev(spec, at, zone, repeated, MINUTE_HORIZON)


@PROPERTY
@given(cases(seconds_expressions(), timedelta(hours=3)))
def test_prev_with_seconds_agrees_with_the_oracle(case: tuple[str, str, datetime, str]) -> None:
    expr, zone, at, repeated = case
    check_prev(parsed(expr, "extended"), at, zone, repeated, SECOND_HORIZON)


@settings(max_examples=200, deadline=None)
@given(
    strict_expressions() | extended_expressions(),
    st.sampled_from(ZONES),
    st.datetimes(datetime(1975, 1, 1), datetime(2090, 1, 1), timezones=st.just(UTC)),
    POLICIES,
)
def test_next_and_prev_are_inverse(expr: str, zone: str, after: datetime, repeated: str) -> None:
    """prev(next(t)) == next(t); nothing fires in between: prev(next(t) - 1µs) <= t < next(t)."""
    spec = parsed(expr, "extended")
    kw = {"tz": zone, "repeated": repeated}
    fire = next_after(spec, after, **kw)  # type: ignore[arg-type]
    assume(fire is not None)
    assert fire is not None and fire > after
    assert prev_at_or_before(spec, fire, **kw) == fire  # type: ignore[arg-type]
    before = prev_at_or_before(spec, fire - timedelta(microseconds=1), **kw)  # type: ignore[arg-type]
    assert before is None or before <= after
    if before is not None:
        assert next_after(spec, before, **kw) == fire  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(
    strict_expressions() | extended_expressions() | seconds_expressions(),
    st.sampled_from(ZONES),
    st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30), timezones=st.just(UTC)),
    POLICIES,
)
def test_evaluation_is_total_over_the_datetime_range(
    expr: str, zone: str, moment: datetime, repeated: str
) -> None:
    """Any aware instant: a result on the right side of it, or None — never an exception."""
    spec = parsed(expr, "extended")
    kw = {"tz": zone, "repeated": repeated}
    fire = next_after(spec, moment, **kw)  # type: ignore[arg-type]
    assert fire is None or fire > moment
    before = prev_at_or_before(spec, moment, **kw)  # type: ignore[arg-type]
    assert before is None or before <= moment


@pytest.mark.parametrize("zone", [*ZONES, "UTC", "Pacific/Kiritimati", "Etc/GMT+12"])
@pytest.mark.parametrize("expr", ["* * * * *", "0 9 * * *", "*/15 * * * * *"])
def test_evaluation_is_total_at_the_first_and_last_instants(expr: str, zone: str) -> None:
    """The very first instant (a wall time before year 1 in a zone behind UTC) and the very
    last one: a result or None, never an OverflowError."""
    spec = parse(expr, dialect="extended")
    first = datetime.min.replace(tzinfo=UTC)
    last = datetime.max.replace(tzinfo=UTC)
    for repeated in ("first", "both"):
        fire = next_after(spec, first, tz=zone, repeated=repeated)  # type: ignore[arg-type]
        assert fire is not None and fire > first
        assert next_after(spec, last, tz=zone, repeated=repeated) is None  # type: ignore[arg-type]
        assert prev_at_or_before(spec, first, tz=zone, repeated=repeated) is None  # type: ignore[arg-type]
        before = prev_at_or_before(spec, last, tz=zone, repeated=repeated)  # type: ignore[arg-type]
        assert before is None or before <= last
