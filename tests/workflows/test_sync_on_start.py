"""A process's sync of its declared schedules on start (SPEC §12) runs on the ticker's pool
(``tocsin.store.pools``): schedulers starting together wait for each other's sync past the
API's short ``lock_timeout`` (``TOCSIN_API_LOCK_TIMEOUT_S``) instead of refusing to start."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime

import psycopg
import pytest

from tocsin import Schedule, workflow
from tocsin.service import Tocsin
from tocsin.service.apps import sync_and_log
from tocsin.settings import Settings

from .helpers import ReportIn, ReportOut, send_report

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"])  # PostgreSQL only: overrides the matrix
def test_a_sync_on_start_waits_for_a_lock_past_the_api_lock_timeout(
    store_url: str, settings: Settings
) -> None:
    schedule = Schedule(id="s", cron="* * * * *", timezone="UTC", input_data={"user_id": "u"})
    flow = workflow(id="sync-wait", input=ReportIn, output=ReportOut, schedule=[schedule])
    opened = Tocsin.open(
        store_url,
        settings=replace(settings, api_lock_timeout_s=0.2),
        workflows=[flow.then(send_report).commit()],
    )
    try:
        with psycopg.connect(store_url, connect_timeout=5) as holder:  # the test's schema
            holder.execute("LOCK TABLE workflow_schedules IN ACCESS EXCLUSIVE MODE")
            release = threading.Timer(1.0, holder.rollback)  # another process's sync ends
            release.start()
            try:
                report = sync_and_log(opened, NOW)
            finally:
                release.cancel()
        assert report["created"] == ["wf_sync-wait__s"]
    finally:
        opened.close()
