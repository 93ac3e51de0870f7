"""The tick's batched path: its garbage-collector pause."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from tocsin.engine.tick_batch import collector_paused


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
