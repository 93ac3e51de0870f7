"""Registering a workflow is enough (SPEC §12) when tocsin is embedded, on SQLite and PostgreSQL:
a ``Tocsin`` opened with workflows (or lanes) syncs their declared schedules once, at its first
``tick`` or ``start_workflow``, without ``sync_schedules``; one opened without any never syncs,
so a bare facade (``tocsin tick``) never deletes the declared schedules it does not know."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

import pytest
from typer.testing import CliRunner

from tocsin.cli import app
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.workflows.definition import Workflow

from .helpers import NOW, daily, minutes

NINE_NY = datetime.fromisoformat("2026-03-02T14:00:00+00:00")  # 09:00 New York, Monday
SID = "wf_daily-report"


@pytest.fixture
def opened(store_url: str) -> Iterator[list[Tocsin]]:
    """Facades opened on the test database; closed at the end."""
    made: list[Tocsin] = []
    yield made
    for t in made:
        t.close()


def _open(opened: list[Tocsin], url: str, workflows: list[Workflow]) -> Tocsin:
    t = Tocsin.open(url, settings=Settings(database_url=url), workflows=workflows)
    opened.append(t)
    return t


def _schedule_ids(t: Tocsin) -> list[str]:
    return [s["id"] for s in t.schedules.list()["items"]]


def test_the_first_tick_syncs_and_the_declared_schedule_fires(
    store_url: str, opened: list[Tocsin]
) -> None:
    t = _open(opened, store_url, [daily()])
    assert _schedule_ids(t) == []  # opening writes nothing
    assert t.tick(now=NOW)["schedules_fired"] == 0  # synced: anchored at now, not backfilled
    assert t.schedules.get(SID)["next_fire_at"] == NINE_NY
    assert t.tick(now=NINE_NY)["schedules_fired"] == 1
    [run] = t.workflow_runs("daily-report")["items"]
    assert run["status"] == "pending"


def test_the_first_start_workflow_syncs_too(store_url: str, opened: list[Tocsin]) -> None:
    t = _open(opened, store_url, [daily()])
    t.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    assert _schedule_ids(t) == [SID]
    assert t.schedules.get(SID)["next_fire_at"] == NINE_NY


def test_it_syncs_once_and_an_explicit_sync_keeps_its_report(
    store_url: str, opened: list[Tocsin]
) -> None:
    first = _open(opened, store_url, [daily()])
    assert first.sync_schedules(now=NOW)["created"] == [SID]  # explicit, with its report
    first.tick(now=NOW)  # owes nothing any more
    second = _open(opened, store_url, [daily(cron="30 10 * * *")])  # a redeploy
    second.tick(now=NOW + minutes(1))  # its own first sync
    assert second.schedules.get(SID)["next_fire_at"] == NINE_NY + minutes(90)
    first.tick(now=NOW + minutes(2))
    first.start_workflow("daily-report", {"user_id": "u1"}, now=NOW + minutes(2), wait=False)
    assert first.schedules.get(SID)["next_fire_at"] == NINE_NY + minutes(90)  # not synced again


def test_a_facade_opened_without_workflows_never_deletes_declared_schedules(
    store_url: str, opened: list[Tocsin], monkeypatch: pytest.MonkeyPatch
) -> None:
    _open(opened, store_url, [daily()]).tick(now=NOW)
    bare = _open(opened, store_url, [])
    bare.tick(now=NOW + minutes(1))
    assert bare.tick(now=NINE_NY)["schedules_fired"] == 1  # and it fires what is due
    assert _schedule_ids(bare) == [SID]
    monkeypatch.setenv("TOCSIN_DATABASE_URL", store_url)
    monkeypatch.delenv("TOCSIN_APP", raising=False)
    result = CliRunner().invoke(app, ["tick"], catch_exceptions=False)  # `tocsin tick`, bare
    assert result.exit_code == 0, result.output
    assert "schedules_fired" in json.loads(result.output)
    assert _schedule_ids(bare) == [SID]
