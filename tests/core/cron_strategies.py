"""Hypothesis strategies for cron expressions and DST-biased start instants (test helper)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cron_reference import transitions
from hypothesis import strategies as st

ZONES = (
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "America/Sao_Paulo",
    "Asia/Taipei",
    "UTC",
)
#: Local hours around the DST transitions of the zones above (00:00-04:00), drawn often.
HOT_HOURS = (0, 1, 2, 3, 4)
MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


def _items(
    low: int, high: int, hot: tuple[int, ...] = (), extended: bool = False
) -> st.SearchStrategy[str]:
    value = (
        st.integers(low, high)
        if not hot
        else st.one_of(st.sampled_from(hot), st.integers(low, high))
    )
    span = max(1, (high - low) // 2)
    step = st.integers(1, span)
    ranges = st.tuples(value, value).map(sorted)
    forms = [
        value.map(str),
        ranges.map(lambda r: f"{r[0]}-{r[1]}"),
        step.map(lambda n: f"*/{n}"),
        st.tuples(ranges, step).map(lambda p: f"{p[0][0]}-{p[0][1]}/{p[1]}"),
    ]
    if extended:
        forms.append(st.tuples(value, step).map(lambda p: f"{p[0]}/{p[1]}"))
    return st.lists(st.one_of(forms), min_size=1, max_size=3).map(",".join)


def _field(items: st.SearchStrategy[str], stars: int) -> st.SearchStrategy[str]:
    return st.one_of(*([st.just("*")] * stars), items)


def _extended_dom() -> st.SearchStrategy[str]:
    return st.one_of(_items(1, 31, extended=True), st.just("L"), st.just("?"), st.just("1,L"))


def _extended_dow() -> st.SearchStrategy[str]:
    weekday = st.integers(0, 7).map(str) | st.sampled_from(DAYS)
    special = st.one_of(
        st.just("L"),
        weekday.map(lambda d: f"{d}L").filter(lambda t: t.upper() not in DAYS),
        st.tuples(weekday, st.integers(1, 5)).map(lambda p: f"{p[0]}#{p[1]}"),
        st.tuples(st.sampled_from(DAYS), st.sampled_from(DAYS)).map(
            lambda p: f"{min(p, key=DAYS.index)}-{max(p, key=DAYS.index)}"
        ),
        st.just("5-7"),
    )
    return st.one_of(_items(0, 7, extended=True), special)


def _extended_month() -> st.SearchStrategy[str]:
    return st.one_of(_items(1, 12, extended=True), st.sampled_from(MONTHS), st.just("JAN-JUN"))


@st.composite
def strict_expressions(draw: st.DrawFn) -> str:
    """Five strict fields, mostly firing at least daily so a 3-day reference walk finds fires."""
    minute = draw(_field(_items(0, 59), 1))
    hour = draw(_field(_items(0, 23, HOT_HOURS), 1))
    dom = draw(_field(_items(1, 31), 3))
    month = draw(_field(_items(1, 12), 3))
    dow = draw(_field(_items(0, 6), 3))
    return f"{minute} {hour} {dom} {month} {dow}"


@st.composite
def extended_expressions(draw: st.DrawFn) -> str:
    """Five extended fields: names, 7, value/step, L, nL, n#k, ?."""
    minute = draw(_field(_items(0, 59, extended=True), 1))
    hour = draw(_field(_items(0, 23, HOT_HOURS, extended=True), 1))
    dom = draw(_field(_extended_dom(), 3))
    month = draw(_field(_extended_month(), 3))
    dow = draw(_field(_extended_dow(), 3))
    return f"{minute} {hour} {dom} {month} {dow}"


@st.composite
def seconds_expressions(draw: st.DrawFn) -> str:
    """Six or seven extended fields that fire at least hourly (a 2-hour second walk)."""
    second = draw(_field(_items(0, 59, extended=True), 1))
    minute = draw(_field(_items(0, 59, extended=True), 2))
    hour = draw(st.one_of(st.just("*"), _items(0, 23, HOT_HOURS)))
    text = f"{second} {minute} {hour} * * *"
    if draw(st.booleans()):
        text += " " + draw(st.sampled_from(["*", "2024-2027", "2025,2026", "2026", "2024-2099/2"]))
    return text


@st.composite
def instants(draw: st.DrawFn, zone: str, spread: timedelta = timedelta(days=2)) -> datetime:
    """An aware instant, most often within ``spread`` of one of the zone's 2024-2027 transitions."""
    found = transitions(zone)
    seconds = int(spread.total_seconds())
    if found and draw(st.integers(0, 4)) > 0:
        base = draw(st.sampled_from(found))
        delta = draw(st.integers(-seconds, seconds))
    else:
        base = datetime(2024, 1, 1, tzinfo=UTC)
        delta = draw(st.integers(0, 4 * 365 * 86400))
    micro = draw(st.sampled_from([0, 0, 0, 1, 999_999]))
    return base + timedelta(seconds=delta, microseconds=micro)
