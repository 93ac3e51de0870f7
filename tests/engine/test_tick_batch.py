"""Helpers of the tick's batched path: the collector pause and time-ordered run ids."""

from __future__ import annotations

import gc
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tocsin.engine.tick_batch import collector_paused, time_ordered_id

AT = datetime(2026, 8, 27, 5, 2, 13, 456_000, tzinfo=UTC)


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_on")
def test_the_collector_is_paused_inside_and_back_on_after_the_outermost_block() -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_the_collector_comes_back_on_when_a_block_raises() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_collector_the_application_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_threads_resume_the_collector_only_when_the_last_block_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    worker.start()
    assert inside.wait(5)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's block is still open
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_run_ids_are_version_7_uuids_ordered_by_their_instant() -> None:
    ids = [time_ordered_id(AT + timedelta(milliseconds=k)) for k in range(50)]
    parsed = [uuid.UUID(i) for i in ids]
    assert all(str(u) == i and u.version == 7 and u.variant == uuid.RFC_4122 for u, i in
               zip(parsed, ids, strict=True))  # fmt: skip
    assert ids == sorted(ids) and len(set(ids)) == 50
    assert int(ids[0].replace("-", "")[:12], 16) == int(AT.timestamp() * 1000)
    same = {time_ordered_id(AT) for _ in range(1000)}
    assert len(same) == 1000  # 74 random bits within one millisecond
