"""IANA lookup and wall time → instant under the fold=0 rule (SPEC §4.3).

Transition table (tzdata):

| zone | date | local change | offsets |
|---|---|---|---|
| America/New_York | 2024-03-10 | 02:00 EST → 03:00 EDT (02:00–02:59 missing) | -05:00 → -04:00 |
| America/New_York | 2024-11-03 | 02:00 EDT → 01:00 EST (01:00–01:59 twice) | -04:00 → -05:00 |
| Asia/Taipei | — | no DST since 1979 | +08:00 |
"""

from __future__ import annotations

from datetime import date, time

import pytest

from tocsin import messages
from tocsin.core.time.zones import (
    canonical_zone,
    get_zone,
    is_ambiguous,
    is_known_zone,
    is_nonexistent,
    suggest,
    wall_to_instant,
)
from tocsin.errors import ConfigError

NOT_STRING = "daily schedule timezone must be an IANA name string (e.g. 'Asia/Taipei')"


def unknown_text(tz: str) -> str:
    quoted = tz if len(tz) <= 64 else tz[:64] + "…"  # a huge name is not echoed whole
    return (
        f"daily schedule timezone '{quoted}' is not a known IANA zone. "
        "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
    )


def test_known_zones() -> None:
    assert get_zone("Asia/Taipei").key == "Asia/Taipei"
    assert get_zone("UTC").key == "UTC"
    assert get_zone("America/Argentina/Buenos_Aires").key == "America/Argentina/Buenos_Aires"
    assert get_zone("Etc/GMT+5").key == "Etc/GMT+5"
    assert get_zone("Asia/Taipei") is get_zone("Asia/Taipei")


@pytest.mark.parametrize("value", [None, 8, 8.0, True, ["Asia/Taipei"], {"tz": "UTC"}, b"UTC"])
def test_non_string_timezone(value: object) -> None:
    with pytest.raises(ConfigError) as info:
        get_zone(value)
    assert info.value.detail == NOT_STRING
    assert info.value.detail == messages.DAILY_TIMEZONE_NOT_STRING
    assert info.value.code == "timezone_invalid"
    assert info.value.status == 400
    assert not is_known_zone(value)


@pytest.mark.parametrize(
    "name",
    [
        "Mars/Olympus_Mons",
        "",
        " ",
        "Asia/Taipei ",
        "Asia/Taipei\n",
        "Asia",
        "../../etc/passwd",
        "/etc/localtime",
        "/usr/share/zoneinfo/UTC",
        "Asia\\Taipei",
        "Asia/../UTC",
        "UTC\x00",
        "x" * 300,
        "zone.tab",
        "__init__",
        "localtime",  # the host's zone: not portable
        "Factory",
        "posixrules",
        "posix/Asia/Taipei",
        "right/UTC",
    ],
)
def test_unknown_timezone(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_zone(name)
    # the SPEC text, exactly, then the nearest valid names when some are close
    assert unknown_text(name) == messages.daily_timezone_unknown(name)
    assert info.value.detail == unknown_text(name) + messages.did_you_mean(suggest(name))
    assert info.value.code == "timezone_invalid"
    assert not is_known_zone(name)


def test_an_unknown_zone_names_the_nearest_valid_ones() -> None:
    with pytest.raises(ConfigError) as info:
        get_zone("Europe/Berln")
    assert info.value.detail == (
        unknown_text("Europe/Berln")
        + " (did you mean 'Europe/Berlin', 'Europe/Dublin' or 'Europe/Belfast'?)"
    )
    with pytest.raises(ConfigError) as far:
        get_zone("Mars/Olympus")
    assert far.value.detail == unknown_text("Mars/Olympus")  # nothing close: the text alone


@pytest.mark.parametrize("name", ["europe/berlin", "EUROPE/BERLIN", "eUrOpE/bErLiN"])
def test_any_case_of_a_known_zone_is_that_zone(name: str) -> None:
    assert get_zone(name).key == "Europe/Berlin"
    assert canonical_zone(name) == "Europe/Berlin"
    assert not is_known_zone(name)  # as written, it is not an IANA key


@pytest.mark.parametrize(
    ("zone", "day", "wall", "expected"),
    [
        # spring forward: 02:30 does not exist; fold=0 reads it with EST (-05:00)
        ("America/New_York", date(2024, 3, 10), time(2, 30), "2024-03-10T07:30:00+00:00"),
        ("America/New_York", date(2024, 3, 10), time(1, 59), "2024-03-10T06:59:00+00:00"),
        ("America/New_York", date(2024, 3, 10), time(3, 0), "2024-03-10T07:00:00+00:00"),
        # fall back: 01:30 happens twice; fold=0 picks the first (EDT, -04:00)
        ("America/New_York", date(2024, 11, 3), time(1, 30), "2024-11-03T05:30:00+00:00"),
        ("America/New_York", date(2024, 11, 3), time(2, 0), "2024-11-03T07:00:00+00:00"),
        ("Asia/Taipei", date(2026, 8, 27), time(1, 30), "2026-08-26T17:30:00+00:00"),
        ("UTC", date(2026, 8, 27), time(1, 30), "2026-08-27T01:30:00+00:00"),
    ],
)
def test_wall_to_instant(zone: str, day: date, wall: time, expected: str) -> None:
    assert wall_to_instant(day, wall, get_zone(zone)).isoformat() == expected


def test_wall_to_instant_ignores_a_fold_on_the_time() -> None:
    ny = get_zone("America/New_York")
    folded = time(1, 30, fold=1)
    assert wall_to_instant(date(2024, 11, 3), folded, ny).isoformat() == (
        "2024-11-03T05:30:00+00:00"
    )


def test_wall_to_instant_saturates_at_the_range_ends() -> None:
    taipei = get_zone("Asia/Taipei")
    new_york = get_zone("America/New_York")
    assert wall_to_instant(date.min, time(0), taipei).year == 1
    assert wall_to_instant(date.max, time(23, 59), new_york).year == 9999


def test_gap_and_fold_detection() -> None:
    ny = get_zone("America/New_York")
    assert is_nonexistent(date(2024, 3, 10), time(2, 30), ny)
    assert not is_nonexistent(date(2024, 3, 10), time(3, 30), ny)
    assert not is_ambiguous(date(2024, 3, 10), time(2, 30), ny)
    assert is_ambiguous(date(2024, 11, 3), time(1, 30), ny)
    assert not is_ambiguous(date(2024, 11, 3), time(2, 30), ny)
    assert not is_nonexistent(date(2024, 11, 3), time(1, 30), ny)
    taipei = get_zone("Asia/Taipei")
    assert not is_nonexistent(date(2026, 3, 8), time(2, 30), taipei)
    assert not is_ambiguous(date(2026, 11, 1), time(1, 30), taipei)
