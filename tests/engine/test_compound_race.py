"""SPEC §13 on one PostgreSQL database: two schedulers (each its own ``Tocsin``, in threads)
consume the same event outbox while a writer adds events. No event is counted twice (one fire
per event of an ``OR`` trigger, never two), no fire is lost, the outbox ends empty."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import AnyOf, Schedule, TableUpdated, workflow
from tocsin.core.model import TriggerEvent
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import trigger_events as store_events
from workflows.helpers import ReportIn, ReportOut, send_report

BASE = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
EVENTS = 120
SCHEDULERS = 2


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"])  # PostgreSQL only: overrides the matrix
def test_two_schedulers_count_each_event_once(
    store_url: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    claimed: list[tuple[str, int]] = []  # (scheduler thread, event id) per claim
    real_claim = store_events.claim_events

    def spying_claim(tx: Any, *, limit: int) -> list[TriggerEvent]:
        got = real_claim(tx, limit=limit)
        claimed.extend((threading.current_thread().name, e.id) for e in got)
        return got

    monkeypatch.setattr(store_events, "claim_events", spying_claim)
    writer = Tocsin.open(store_url, settings=settings)
    table = str(writer.create_table("chatroom", str(uuid.uuid4()), "E", {"N": "number"})["id"])
    sched = Schedule(
        trigger=AnyOf(TableUpdated(table)), overlap="allow", input_data={"user_id": "x"}
    )
    wf = workflow(id="each", input=ReportIn, output=ReportOut, schedule=sched).then(send_report)
    app = wf.commit()
    writer.register_workflows([app])
    writer.sync_schedules(now=BASE)
    schedulers = [Tocsin.open(store_url, settings=settings, workflows=[app]) for _ in range(2)]
    done = threading.Event()
    fired = [0] * SCHEDULERS
    errors: list[BaseException] = []
    start = threading.Barrier(SCHEDULERS + 1)

    def ticker(index: int) -> None:
        try:
            start.wait()
            while not done.is_set():
                fired[index] += schedulers[index].tick(now=BASE + timedelta(hours=1))[
                    "schedules_fired"
                ]
            fired[index] += schedulers[index].tick(now=BASE + timedelta(hours=1))["schedules_fired"]
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=ticker, args=(i,), name=f"scheduler-{i}") for i in range(SCHEDULERS)
    ]
    for thread in threads:
        thread.start()
    try:
        start.wait()
        for i in range(EVENTS):
            writer.insert_record(table, {"N": i}, now=BASE + timedelta(milliseconds=10 * (i + 1)))
        done.set()
        for thread in threads:
            thread.join(120)
        assert not errors, errors
        assert sum(fired) == EVENTS, fired
        items = writer.schedules.fires("wf_each", limit=500)["items"]
        instants = sorted(i["scheduled_for"] for i in items)
        assert instants == [BASE + timedelta(milliseconds=10 * (i + 1)) for i in range(EVENTS)]
        with writer.store.read() as tx:
            assert store_events.count_events(tx) == 0
        ids = [event_id for _, event_id in claimed]
        assert len(ids) == len(set(ids)) == EVENTS  # every event claimed by one scheduler, once
    finally:
        done.set()
        for t in (*schedulers, writer):
            t.close()
