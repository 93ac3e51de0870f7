"""A run whose action ran but whose receipt and finish cannot be written (the database is full)
tries the write again, pausing longer each time up to ``TOCSIN_DB_BACKOFF_MAX_S``, and ends
``done`` or ``failed`` once space is freed, never left ``running`` for the stale sweep.

SQLite only: the database is capped with ``TOCSIN_SQLITE_MAX_BYTES`` and filled by the test's
own connection (``support.storage.Filler``); the pauses are the facade's injected ``sleep``
(``configure_retries``), and the last of them frees the space.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from support.storage import CAP_BYTES, Filler
from support.waiting import wait_for
from tocsin import messages, step, workflow
from tocsin.service import Tocsin
from tocsin.settings import Settings

from .helpers import LATER, make_run, make_table, read_run, trigger

ADMIN_TOKEN = "admin-secret"
BACKOFF_MAX_S = 0.75


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def settings(store_url: str) -> Settings:
    return Settings(
        database_url=store_url,
        admin_token=ADMIN_TOKEN,
        sqlite_max_bytes=CAP_BYTES,
        db_backoff_max_s=BACKOFF_MAX_S,
    )


@pytest.fixture
def disk(store_url: str) -> Iterator[Filler]:
    filler = Filler(store_url)
    yield filler
    filler.close()


def freeing_after(disk: Filler, pauses: int, slept: list[float]) -> Callable[[float], None]:
    """A ``sleep`` that records each pause and frees the space at the ``pauses``-th."""

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == pauses:
            disk.free()

    return sleep


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "tocsin.store"]


def test_a_finish_written_with_its_action_waits_for_space_and_ends_done(
    tocsin: Tocsin, disk: Filler, caplog: pytest.LogCaptureFixture
) -> None:
    """``notify`` commits its message, its receipt and the finish in one transaction: the
    message needs pages the full database does not have."""
    trg = trigger({"type": "notify", "message": "m" * 20_000})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    disk.fill()
    slept: list[float] = []
    tocsin.configure_retries(sleep=freeing_after(disk, 3, slept), jitter=lambda lo, hi: hi)
    caplog.set_level(logging.INFO, logger="tocsin.store")

    assert tocsin.work(now=LATER) == 1

    back = read_run(tocsin, run["id"])
    assert back["status"] == "done", back
    assert [(r["action_id"], r["ok"]) for r in back["action_results"]] == [("act_1", True)]
    assert slept == [0.5, 0.75, 0.75]  # doubling from 0.5 s, capped by the setting
    first, last = outage_lines(caplog)  # one line when it starts, one when it ends
    assert first.getMessage() == messages.database_unavailable(messages.STORAGE_FULL)
    assert first.exc_info is not None and last.exc_info is None
    assert re.fullmatch(r"database back after \d+ s", last.getMessage())


def test_a_failed_finish_waits_for_space_and_ends_failed(tocsin: Tocsin, disk: Filler) -> None:
    """A command that fails: the run's error and its receipt (over a kilobyte together) do not
    fit the run's row any more, the finish needs a page the full database does not have."""
    error = "the command failed: " + "e" * 980

    def failing(inputs: dict[str, Any]) -> str:
        raise RuntimeError(error)

    tocsin.register_command("failing", failing)
    # the run's row (its frozen trigger definition) nearly fills a page
    trg = trigger({"type": "invoke_command", "command": "failing", "inputs": {"pad": "p" * 3_000}})
    run = make_run(tocsin, make_table(tocsin, trg), trg, frozen=True)
    disk.fill()
    slept: list[float] = []
    tocsin.configure_retries(sleep=freeing_after(disk, 2, slept), jitter=lambda lo, hi: hi)

    assert tocsin.work(now=LATER) == 1

    back = read_run(tocsin, run["id"])
    assert back["status"] == "failed", back
    assert back["error"] is not None and back["error"].endswith("e" * 100)
    assert slept == [0.5, 0.75]


@step(id="big")
def big_output(data: Any) -> Any:
    return {"blob": "b" * 200_000}  # the finish writes it: pages the full database lacks


def test_a_workflow_runs_finish_waits_for_space_and_ends_success(
    tocsin: Tocsin, disk: Filler
) -> None:
    """A workflow run's finish (its output) waits out the full database as a table run's does:
    paused (at most ``TOCSIN_DB_BACKOFF_MAX_S``) and tried again until space is freed, never
    left ``running`` for the stale sweep. The worker's thread pauses for real: the test frees
    the space once the outage is under way."""
    tocsin.register_workflows([workflow(id="big-output").then(big_output).commit()])
    run = tocsin.start_workflow("big-output", {}, now=LATER, wait=False)
    disk.fill()
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(tocsin.work(now=LATER)))
    worker.start()
    wait_for("the outage", lambda: tocsin.store.outage.ongoing, timeout=10, every=0.01)
    assert tocsin.store.outage.ongoing  # the finish met the full database
    assert tocsin.get_workflow_run(run["id"])["status"] == "running"
    disk.free()
    worker.join(timeout=10)
    assert done == [1]
    back = tocsin.get_workflow_run(run["id"])
    assert back["status"] == "success", back
    assert back["output"] == {"blob": "b" * 200_000}
    assert not tocsin.store.outage.ongoing
