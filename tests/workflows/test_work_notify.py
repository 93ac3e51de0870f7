"""Idle workers are woken by work another process makes (store.notify).

PostgreSQL: a transaction that leaves runs pending notifies at its commit; a ``WorkListener`` on
another connection ends its wait for it. Nothing is notified for a rollback, for another schema,
or for a transaction that leaves nothing pending (claims, finishes). SQLite: the listener's wait
ends when another connection committed a change to the file (``PRAGMA data_version``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import psycopg
import pytest

from runs.helpers import NOW as RUN_NOW
from runs.helpers import make_run, make_table, trigger
from support.claims import claimed_runs
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.notify import CHANNEL, WorkListener

from .helpers import NOW, daily

PG_ONLY = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True
)
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
def app(store_url: str) -> Iterator[Tocsin]:
    t = Tocsin.open(store_url, settings=Settings(database_url=store_url), workflows=[daily()])
    try:
        yield t
    finally:
        t.close()


@pytest.fixture
def listener(app: Tocsin) -> Iterator[WorkListener]:
    heard = WorkListener(app.store, threading.Event())
    try:
        assert heard.wait(5) is True  # its first wait connects, listens, and answers at once
        yield heard
    finally:
        heard.close()


@PG_ONLY
def test_a_run_made_pending_wakes_a_listening_worker(app: Tocsin, listener: WorkListener) -> None:
    assert listener.wait(0.05) is False  # nothing made yet: the wait ends at its timeout
    app.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    assert listener.wait(30) is True


@PG_ONLY
def test_no_wake_for_a_rollback_or_for_what_leaves_nothing_pending(
    app: Tocsin, listener: WorkListener
) -> None:
    with pytest.raises(RuntimeError), app.store.begin() as tx:
        tx.wake_workers()
        raise RuntimeError("rolled back")
    assert listener.wait(0.2) is False
    run = app.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    assert listener.wait(30) is True
    with app.store.begin() as tx:  # a claim and a finish leave nothing pending
        claimed = claimed_runs(tx, now=NOW, limit=10, workflow_ids=["daily-report"])
    assert [r["id"] for r in claimed] == [run["id"]]
    assert listener.wait(0.2) is False


@PG_ONLY
def test_a_start_workflow_action_wakes_it_when_the_parent_commits(
    app: Tocsin, listener: WorkListener
) -> None:
    """The child run is inserted in the transaction that stores the parent's receipt: its commit
    tells the idle workers that a workflow run is pending."""
    start = {"type": "start_workflow", "workflow_id": "daily-report", "input": {"user_id": "u"}}
    trg = trigger(start)
    make_run(app, make_table(app, trg), trg)
    assert listener.wait(30) is True  # the parent run, pending
    assert listener.wait(0.1) is False
    assert app.work(now=RUN_NOW, limit=1) == 1  # the parent alone: claimed, its action, done
    assert listener.wait(30) is True  # the child, pending
    assert [r["status"] for r in app.workflow_runs()["items"]] == ["pending"]


@PG_ONLY
def test_another_schemas_work_does_not_wake_it(listener: WorkListener) -> None:
    url = os.environ["TOCSIN_TEST_PG_URL"].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as other:  # another tocsin's schema, same database
        other.execute("SELECT pg_notify(%s, 'some_other_schema')", (CHANNEL,))
    assert listener.wait(0.3) is False


@SQLITE_ONLY
def test_sqlite_a_commit_by_another_connection_wakes_it_a_read_does_not(
    app: Tocsin, listener: WorkListener
) -> None:
    assert listener.wait(0.1) is False
    app.workflow_runs()  # reads change nothing
    assert listener.wait(0.1) is False
    app.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    assert listener.wait(30) is True
    assert listener.wait(0.1) is False  # seen: the next wait waits for the next commit


def test_the_interrupt_ends_a_wait(app: Tocsin) -> None:
    stop = threading.Event()
    heard = WorkListener(app.store, stop)
    try:
        assert heard.wait(5) is True  # listening from now
        stop.set()
        assert heard.wait(60) is False  # returns at once: this test does not wait 60 s
    finally:
        heard.close()


def test_tocsin_worker_loop_starts_a_run_another_process_made_not_a_poll_later(
    app: Tocsin, store_url: str
) -> None:
    """``tocsin worker``'s loop (``serve_worker`` with the listener as its idle wait, as the
    CLI runs it) with a 60 s poll: a run made by another facade (another process) after the
    worker went idle runs well before the poll would have looked again."""
    stop = threading.Event()
    heard = WorkListener(app.store, stop)
    idling = threading.Semaphore(0)

    def idle(timeout: float) -> bool:
        idling.release()
        return heard.wait(timeout)

    loop = threading.Thread(
        target=serve_worker,
        args=(app,),
        kwargs={"stop_event": stop, "poll_interval": 60.0, "clock": lambda: NOW, "idle": idle},
    )
    loop.start()
    try:
        assert idling.acquire(timeout=10)  # its first pass found nothing
        assert idling.acquire(timeout=10)  # the listener's first wait answered: a second pass
        settings = Settings(database_url=store_url)
        other = Tocsin.open(store_url, settings=settings, workflows=[daily()])
        try:
            run = other.start_workflow("daily-report", {"user_id": "u9"}, now=NOW, wait=False)
        finally:
            other.close()
        done = threading.Event()
        for _ in range(300):
            if app.get_workflow_run(run["id"])["status"] == "success":
                done.set()
                break
            stop.wait(0.1)
        assert done.is_set(), "the worker slept through the run another process made"
    finally:
        stop.set()
        loop.join(30)
        heard.close()
    assert not loop.is_alive()
