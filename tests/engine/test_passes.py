"""The tick's one paging loop (``engine.passes``): every pass's pages in order, one transaction
each, until the pass says none is left or took its ``limit`` units; a pass whose ``prepare``
answers False opens no transaction; the counts go under each pass's keys once the page committed;
a page that raises goes again unit by unit, a unit that raises again is skipped; an outage fails
the call."""

from __future__ import annotations

from datetime import datetime

import pytest

from tocsin.engine.passes import Pass, Take, fire_passes
from tocsin.errors import StoreUnavailable
from tocsin.store import Store
from tocsin.store.tx import Tx

NOW = datetime.fromisoformat("2026-08-27T05:00:00+00:00")


def test_the_loop_drives_every_pass_page_by_page_in_order(store: Store) -> None:
    seen: list[tuple[str, int]] = []

    def pages(name: str, fires: list[int]) -> Pass:
        left = list(fires)

        def page(tx: Tx, now: datetime, take: Take) -> bool:
            assert now == NOW and tx is not None and take.room is None
            seen.append((name, left[0]))
            take.counts[name] += left.pop(0)
            return bool(left)

        return Pass((name,), page)

    def never(now: datetime) -> bool:
        seen.append(("prepared", 0))
        return False

    def idle_page(tx: Tx, now: datetime, take: Take) -> bool:
        take.counts["idle_fired"] += 1
        return False

    idle = Pass(("idle_fired",), idle_page, never)
    passes = [pages("a", [2, 3]), pages("b", [1]), idle, pages("a", [4])]
    assert fire_passes(store, passes, now=NOW) == {"a": 9, "b": 1, "idle_fired": 0}
    assert seen == [("a", 2), ("a", 3), ("b", 1), ("prepared", 0), ("a", 4)]


def units_pass(units: list[str], *, size: int, limit: int | None = None, broken: str = "") -> Pass:
    """Pages of up to ``size`` of ``units`` not done yet nor in ``take.skip``, each unit counting
    1 under ``done``; a page holding ``broken`` raises, and so does ``broken``'s page of its
    own."""
    done: set[str] = set()

    def page(tx: Tx, now: datetime, take: Take) -> bool:
        left = [u for u in units if u not in done and u not in take.skip]
        if take.only is not None:
            left = [take.only]
        claimed = left[: size if take.room is None else min(size, take.room)]
        take.units += claimed
        if broken in claimed:
            raise RuntimeError("broken unit")
        done.update(claimed)
        take.counts["done"] += len(claimed)
        take.counts["pages"] += 1
        return len(left) > len(claimed)

    return Pass(("done", "pages"), page, limit=limit)


def test_a_pass_takes_at_most_its_limit_of_units_per_call(store: Store) -> None:
    seven = units_pass([f"u{i}" for i in range(7)], size=2, limit=5)
    assert fire_passes(store, [seven], now=NOW) == {"done": 5, "pages": 3}  # 2, 2, then 1
    assert fire_passes(store, [seven], now=NOW) == {"done": 2, "pages": 1}  # what is left


def test_a_failing_page_goes_again_unit_by_unit_and_the_broken_unit_is_skipped(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    units = [f"u{i}" for i in range(5)]
    passes = [units_pass(units, size=3, broken="u1"), units_pass(["v0"], size=3)]
    # u0..u2 fail together, then u0 and u2 commit alone (u1 still fails), then u3, u4; v0 runs
    assert fire_passes(store, passes, now=NOW) == {"done": 5, "pages": 4}
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        "tick: a page of done/pages failed; its 3 units again, one at a time",
        "tick: u1 skipped",
    ]


def test_a_failing_page_that_named_no_unit_ends_its_pass_and_the_others_proceed(
    store: Store,
) -> None:
    def page(tx: Tx, now: datetime, take: Take) -> bool:
        take.counts["lost"] += 1  # rolled back with its page: never counted
        raise RuntimeError("broken before its claim")

    passes = [Pass(("lost",), page), units_pass(["v0", "v1"], size=1)]
    assert fire_passes(store, passes, now=NOW) == {"lost": 0, "done": 2, "pages": 2}


def test_a_database_that_takes_no_writes_fails_the_call(store: Store) -> None:
    def page(tx: Tx, now: datetime, take: Take) -> bool:
        take.units.append("u0")
        raise StoreUnavailable("down")

    with pytest.raises(StoreUnavailable):
        fire_passes(store, [Pass(("done",), page)], now=NOW)
