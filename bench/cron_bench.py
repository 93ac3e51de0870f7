"""Benchmark tocsin.core.time.cron against croniter and cronsim, and check all three are correct.

Run: ``.venv/bin/python bench/cron_bench.py`` (or ``make bench``). Options: ``--repeat N``.

Workload, identical for the three libraries: 20 expressions x 3 zones (UTC, America/New_York,
Australia/Lord_Howe). For each case, two windows around the zone's 2025 DST transitions
(UTC uses New York's dates): each window starts 20 hours before the transition and lasts 45 days;
in each window the library computes successive next fires from an object built at the window
start (tocsin: ``parse`` + ``next_after`` chained; croniter: ``croniter(expr, start).get_next``;
cronsim: ``next(CronSim(expr, start))``) until the window ends or 1500 fires. Timing = best of
``--repeat`` runs, reported as microseconds per next call (calls = fires + the one call per
window that lands past its end; construction of the object included, once per window).
A second figure times construction + the first next fire alone (tocsin: the uncached parser).

Correctness: a brute-force reference walks every UTC minute of both windows, converts it to wall
time (``astimezone``) and matches the fields; a nonexistent wall time never fires and a repeated
one fires at its first occurrence (SPEC §4.4). Every library's fires are compared with it; the
script exits 1 if tocsin disagrees anywhere (croniter and cronsim disagreements are reported).
"""

from __future__ import annotations

import argparse
import calendar
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from croniter import croniter
from cronsim import CronSim

from tocsin.core.time.cron import CronSpec, Dialect, next_after, parse
from tocsin.core.time.cron.parse import build_spec

EXPRESSIONS = (
    "* * * * *",
    "*/5 * * * *",
    "*/15 * * * *",
    "0 * * * *",
    "30 2 * * *",
    "30 1 * * *",
    "0 9 * * 1-5",
    "15,45 8-18 * * 1-5",
    "0 0 * * *",
    "0 12 * * 0",
    "0 0 1 * *",
    "0 9 15 * 5",
    "0 0 */2 * 1",
    "5 4 * * 0",
    "0 22 * * 1-5",
    "*/10 0-3 * * *",
    "0 */6 * * *",
    "0 0 1,15 * *",
    "0 0 L * *",
    "0 10 * * 1#2",
)
ZONES = ("UTC", "America/New_York", "Australia/Lord_Howe")
#: The zone whose transition dates the UTC windows use.
DATES_FROM = {"UTC": "America/New_York"}
LEAD = timedelta(hours=20)
WINDOW = timedelta(days=45)
CAP = 1500
YEAR = 2025

Fires = list[datetime]
Runner = Callable[[str, str, datetime, datetime], Fires]


@dataclass
class Case:
    expr: str
    zone: str
    windows: list[tuple[datetime, datetime]]
    fires: dict[str, Fires]
    seconds: dict[str, float]
    cold: dict[str, float]


def transitions(zone_name: str, year: int) -> list[datetime]:
    """UTC instants of the zone's offset changes in ``year`` (hourly probe, minute bisection)."""
    zone = ZoneInfo(zone_name)
    found, instant = [], datetime(year, 1, 1, tzinfo=UTC)
    offset = instant.astimezone(zone).utcoffset()
    while instant.year == year:
        probe = instant + timedelta(hours=1)
        if probe.astimezone(zone).utcoffset() != offset:
            minute = instant
            while minute.astimezone(zone).utcoffset() == offset:
                minute += timedelta(minutes=1)
            found.append(minute)
            offset = minute.astimezone(zone).utcoffset()
        instant = probe
    return found


def windows_for(zone: str) -> list[tuple[datetime, datetime]]:
    found = transitions(DATES_FROM.get(zone, zone), YEAR)[:2]
    return [(moment - LEAD, moment - LEAD + WINDOW) for moment in found]


def dialect_of(expr: str) -> Dialect:
    return "extended" if ("L" in expr or "#" in expr) else "strict"


def spec_of(expr: str) -> CronSpec:
    return parse(expr, dialect=dialect_of(expr))


def run_tocsin(expr: str, zone: str, start: datetime, end: datetime) -> Fires:
    spec, fires, fire = spec_of(expr), [], start
    while len(fires) < CAP:
        fire = next_after(spec, fire, tz=zone)  # type: ignore[assignment]
        if fire is None or fire >= end:
            break
        fires.append(fire)
    return fires


def run_croniter(expr: str, zone: str, start: datetime, end: datetime) -> Fires:
    it, fires = croniter(expr, start.astimezone(ZoneInfo(zone))), []
    while len(fires) < CAP:
        fire = it.get_next(datetime)
        if fire >= end:
            break
        fires.append(fire)
    return fires


def run_cronsim(expr: str, zone: str, start: datetime, end: datetime) -> Fires:
    it, fires = CronSim(expr, start.astimezone(ZoneInfo(zone))), []
    while len(fires) < CAP:
        fire = next(it)
        if fire >= end:
            break
        fires.append(fire)
    return fires


RUNNERS: dict[str, Runner] = {
    "tocsin": run_tocsin,
    "croniter": run_croniter,
    "cronsim": run_cronsim,
}


def wall_matches(spec: CronSpec, local: datetime) -> bool:
    """Field matching, written independently of tocsin's evaluator (SPEC §4.4 day rule)."""
    if local.minute not in spec.minutes or local.hour not in spec.hours:
        return False
    if local.month not in spec.months:
        return False
    length = calendar.monthrange(local.year, local.month)[1]
    weekday = local.isoweekday() % 7
    dom = local.day in spec.days or (spec.last_day and local.day == length)
    dow = (
        weekday in spec.weekdays
        or (weekday in spec.last_weekdays and local.day + 7 > length)
        or (weekday, (local.day - 1) // 7 + 1) in spec.nth_weekdays
    )
    return (dom and dow) if (spec.dom_star or spec.dow_star) else (dom or dow)


def reference(expr: str, zone_name: str, start: datetime, end: datetime) -> Fires:
    """Every UTC minute in (start, end): its wall time, fold=1 copies skipped, fields matched."""
    spec, zone, fires = spec_of(expr), ZoneInfo(zone_name), []
    minute = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while minute < end and len(fires) < CAP:
        fires.extend(_reference_hour(spec, zone, minute, end))
        minute = minute.replace(minute=0) + timedelta(hours=1)
    return fires[:CAP]


def _reference_hour(
    spec: CronSpec, zone: ZoneInfo, first: datetime, end: datetime
) -> Iterator[datetime]:
    """The fires among the UTC minutes from ``first`` to the end of its UTC hour."""
    last = first.replace(minute=59)
    head, tail = first.astimezone(zone), last.astimezone(zone)
    steady = head.utcoffset() == tail.utcoffset() and head.fold == tail.fold
    if steady and (head.fold or (head.hour not in spec.hours and tail.hour not in spec.hours)):
        return
    instant = first
    while instant <= last and instant < end:
        local = (
            (instant + (head.utcoffset() or timedelta())).replace(tzinfo=zone)
            if steady
            else instant.astimezone(zone)
        )
        if not local.fold and wall_matches(spec, local):
            yield instant
        instant += timedelta(minutes=1)


def measure(case: Case, repeat: int) -> None:
    for name, runner in RUNNERS.items():
        best = math.inf
        for _ in range(repeat):
            began = time.perf_counter()
            fires = [
                f for start, end in case.windows for f in runner(case.expr, case.zone, start, end)
            ]
            best = min(best, time.perf_counter() - began)
        case.fires[name], case.seconds[name] = fires, best
        case.cold[name] = cold_first(name, case)


def cold_first(name: str, case: Case) -> float:
    """Seconds for construction + first next fire (best of 20)."""
    start = case.windows[0][0]
    local = start.astimezone(ZoneInfo(case.zone))
    best = math.inf
    for _ in range(20):
        began = time.perf_counter()
        if name == "tocsin":  # the uncached parser: parse() itself remembers recent specs
            next_after(build_spec(case.expr, dialect_of(case.expr)), start, tz=case.zone)
        elif name == "croniter":
            croniter(case.expr, local).get_next(datetime)
        else:
            next(CronSim(case.expr, local))
        best = min(best, time.perf_counter() - began)
    return best


def disagreements(got: Fires, expected: Fires) -> int:
    """Fires present in one list but not the other (compared as UTC instants)."""
    return len({f.astimezone(UTC) for f in got} ^ {f.astimezone(UTC) for f in expected})


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def report(cases: list[Case], expected: dict[tuple[str, str], Fires]) -> int:
    print(
        f"{'expression':22} {'zone':20} {'fires':>5} {'tocsin':>8} {'croniter':>9} {'cronsim':>8}"
        f" {'x croniter':>10} {'x cronsim':>9}   (µs per next call)"
    )
    ratios: dict[str, list[float]] = {"croniter": [], "cronsim": []}
    cold: dict[str, list[float]] = {"croniter": [], "cronsim": []}
    for case in cases:
        calls = {n: len(case.fires[n]) + len(case.windows) for n in RUNNERS}
        per = {n: case.seconds[n] / calls[n] * 1e6 for n in RUNNERS}
        for other in ratios:
            ratios[other].append(per[other] / per["tocsin"])
            cold[other].append(case.cold[other] / case.cold["tocsin"])
        print(
            f"{case.expr:22} {case.zone:20} {len(case.fires['tocsin']):5d} {per['tocsin']:8.2f}"
            f" {per['croniter']:9.2f} {per['cronsim']:8.2f} {ratios['croniter'][-1]:10.1f}"
            f" {ratios['cronsim'][-1]:9.1f}"
        )
    print()
    for other in ratios:
        print(
            f"geometric mean speed-up, µs per next call: tocsin vs {other}: "
            f"{geomean(ratios[other]):.1f}x"
        )
    for other in cold:
        print(
            f"geometric mean speed-up, construct + first next: tocsin vs {other}: "
            f"{geomean(cold[other]):.1f}x"
        )
    return check(cases, expected)


def check(cases: list[Case], expected: dict[tuple[str, str], Fires]) -> int:
    print("\ncorrectness vs the brute-force reference (fires in one list only):")
    total = {name: 0 for name in RUNNERS}
    dst_total, dst_bad = 0, {name: 0 for name in RUNNERS}
    dst_cases, bad_cases = 0, {name: 0 for name in RUNNERS}
    for case in cases:
        ref = expected[(case.expr, case.zone)]
        bad = {name: disagreements(case.fires[name], ref) for name in RUNNERS}
        if any(bad.values()):
            counts = "  ".join(f"{name} {count:3d}" for name, count in bad.items())
            print(f"  {case.expr:22} {case.zone:20} {counts}   of {len(ref)} reference fires")
        for name in RUNNERS:
            total[name] += bad[name]
            dst_bad[name] += bad[name] if case.zone != "UTC" else 0
        dst_total += len(ref) if case.zone != "UTC" else 0
        dst_cases += case.zone != "UTC"
        for name in RUNNERS:
            bad_cases[name] += bool(bad[name]) and case.zone != "UTC"
    for name in RUNNERS:
        share = 100 * dst_bad[name] / max(dst_total, 1)
        case_share = 100 * bad_cases[name] / max(dst_cases, 1)
        print(
            f"  {name:8} disagreements: {total[name]:5d} overall; {dst_bad[name]:5d} on the "
            f"DST-zone cases ({share:.2f}% of {dst_total} reference fires; "
            f"{bad_cases[name]} of {dst_cases} DST-zone cases = {case_share:.0f}%)"
        )
    if total["tocsin"]:
        print("FAIL: tocsin disagrees with the reference", file=sys.stderr)
        return 1
    print("tocsin agrees with the reference on every case")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [Case(e, z, windows_for(z), {}, {}, {}) for z in ZONES for e in EXPRESSIONS]
    expected = {
        (c.expr, c.zone): [f for s, e in c.windows for f in reference(c.expr, c.zone, s, e)]
        for c in cases
    }
    for case in cases:
        measure(case, args.repeat)
    return report(cases, expected)


if __name__ == "__main__":
    sys.exit(main())
