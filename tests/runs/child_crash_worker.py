"""A worker process for test_child_crash: ``main`` is the target of a process forked by the
test's fork server.

Opens the test's database with the ``child`` workflow registered and drains pending runs once
(``Tocsin.work``), outbound HTTP allowed to 127.0.0.1. As soon as a transaction that inserted a
workflow run has committed (its connection goes back to the pool), it sets ``committed`` and
waits there: the test SIGKILLs it at exactly that point, right after the child run's insert.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import event

from tocsin import StepContext, step, workflow
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.workflows import Workflow

CHILD = "child"


class ChildIn(BaseModel):
    parent: str


@step(id="child-step", input=ChildIn)
def child_step(data: ChildIn, ctx: StepContext) -> dict[str, str]:
    return {"parent": data.parent}


def child_workflow() -> Workflow:
    return workflow(id=CHILD, input=ChildIn).then(child_step).commit()


def hold_after_child_insert(t: Tocsin, committed: Any) -> None:
    for engine in {id(e): e for e in t.store.engines.values()}.values():  # every role's pool
        _hold(engine, committed)


def _hold(engine: Any, committed: Any) -> None:
    @event.listens_for(engine, "after_cursor_execute")
    def _seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sql = statement.upper()
        if "INSERT INTO RUNS" in sql and "'WORKFLOW'" in sql:  # a workflow run's insert
            conn.info["child_inserted"] = True

    @event.listens_for(engine.pool, "checkin")
    def _committed(dbapi_conn: Any, record: Any) -> None:
        if record is not None and record.info.pop("child_inserted", False):
            committed.set()
            time.sleep(60)  # SIGKILLed here


def main(url: str, now_iso: str, committed: Any) -> int:
    settings = Settings(database_url=url, outbound_allow=("127.0.0.1",))
    tocsin = Tocsin.open(url, settings=settings, workflows=[child_workflow()])
    hold_after_child_insert(tocsin, committed)
    try:
        tocsin.work(now=datetime.fromisoformat(now_iso))
    finally:
        tocsin.close()
    return 0
