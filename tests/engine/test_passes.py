"""The tick's one paging loop (``engine.passes``): every pass's pages in order, one transaction
each, until the pass says none is left; a pass whose ``prepare`` answers False opens no
transaction; the fires count under each pass's key."""

from __future__ import annotations

from datetime import datetime

from tocsin.engine.passes import Pass, fire_passes
from tocsin.store import Store
from tocsin.store.tx import Tx

NOW = datetime.fromisoformat("2026-08-27T05:00:00+00:00")


def test_the_loop_drives_every_pass_page_by_page_in_order(store: Store) -> None:
    seen: list[tuple[str, int]] = []

    def pages(name: str, fires: list[int]) -> Pass:
        left = list(fires)

        def page(tx: Tx, now: datetime) -> tuple[int, bool]:
            assert now == NOW and tx is not None
            seen.append((name, left[0]))
            return left.pop(0), bool(left)

        return Pass(name, page)

    def never(now: datetime) -> bool:
        seen.append(("prepared", 0))
        return False

    idle = Pass("idle_fired", lambda tx, now: (1, False), never)
    passes = [pages("a", [2, 3]), pages("b", [1]), idle, pages("a", [4])]
    assert fire_passes(store, passes, now=NOW) == {"a": 9, "b": 1, "idle_fired": 0}
    assert seen == [("a", 2), ("a", 3), ("b", 1), ("prepared", 0), ("a", 4)]
