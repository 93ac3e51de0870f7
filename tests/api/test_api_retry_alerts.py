"""Automatic retries and failure alerts over HTTP (SPEC §8, §9 extended).

A trigger's ``retry`` policy keeps a run whose action fails ``pending`` with ``next_attempt_at``
until its attempts are spent, resuming at the failed action (SPEC §9.2); ``on_failure`` actions
run once when it finally fails, with ``$run.error``. Time is driven explicitly (``work(now=…)``).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from typing import Any

import pytest
from api_support import NOW, Tenant, table_url
from fastapi.testclient import TestClient
from hook_receiver import HookReceiver

from tocsin.service import Tocsin

NO_JITTER = {"max_attempts": 4, "backoff_s": 30, "factor": 2, "max_backoff_s": 3600}


def s(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def put_trigger(
    client: TestClient, tenant: Tenant, table: dict[str, Any], trigger: dict[str, Any]
) -> dict[str, Any]:
    resp = client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [trigger]},
        headers=tenant.moderator,
    )
    assert resp.status_code == 200, resp.text
    saved: dict[str, Any] = resp.json()["triggers"][0]
    return saved


def add_record(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> None:
    resp = client.post(
        table_url(tenant, table, "/records"),
        json={"data": {"Title": "Leak"}},
        headers=tenant.moderator,
    )
    assert resp.status_code == 201, resp.text


def the_run(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> dict[str, Any]:
    page = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator).json()
    assert page["total"] == 1
    run_id = page["items"][0]["id"]
    resp = client.get(table_url(tenant, table, f"/trigger-runs/{run_id}"), headers=tenant.moderator)
    assert resp.status_code == 200
    run: dict[str, Any] = resp.json()
    return run


def at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def feed(client: TestClient, tenant: Tenant) -> list[str]:
    page = client.get(f"{tenant.prefix}/messages", headers=tenant.member).json()
    return [item["text"] for item in page["items"]]


def test_three_backoffs_then_failed_resuming_at_the_failed_action(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [
                    {"type": "notify", "message": "saw $row.Title"},
                    {"type": "webhook", "url": hook.url},
                ],
                "retry": {**NO_JITTER, "jitter": False},
            },
        )
        add_record(client, tenant, table)
        assert tocsin.work(now=NOW) == 1
        run = the_run(client, tenant, table)
        assert (run["status"], run["attempts"]) == ("pending", 1)
        assert at(run["next_attempt_at"]) == s(30)
        assert "answered 500" in run["error"]
        # (30 s, then 60 s, then 120 s): never claimed before its instant
        for wait_until, attempt, next_at in ((30, 2, 90), (90, 3, 210)):
            assert tocsin.work(now=s(wait_until - 1)) == 0
            assert the_run(client, tenant, table)["attempts"] == attempt - 1
            assert tocsin.work(now=s(wait_until)) == 1
            run = the_run(client, tenant, table)
            assert (run["status"], run["attempts"]) == ("pending", attempt)
            assert at(run["next_attempt_at"]) == s(next_at)
        assert tocsin.work(now=s(209)) == 0
        assert tocsin.work(now=s(210)) == 1
        run = the_run(client, tenant, table)
        assert (run["status"], run["attempts"], run["next_attempt_at"]) == ("failed", 4, None)
        assert "answered 500" in run["error"]
        assert [r["ok"] for r in run["action_results"]] == [True, False]
        assert len(hook.received) == 4
        keys = {r.headers["Idempotency-Key"] for r in hook.received}
        assert keys == {f"tocsin-{run['id']}-{run['action_results'][1]['action_id']}"}
    assert feed(client, tenant) == ["saw Leak"]  # the notify before it ran once
    failed = client.get(
        table_url(tenant, table, "/trigger-runs"),
        params={"status": "failed"},
        headers=tenant.moderator,
    ).json()
    assert failed["total"] == 1


def test_a_retry_that_succeeds_ends_done(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(503, 200) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [{"type": "webhook", "url": hook.url}],
                "retry": {"max_attempts": 3, "backoff_s": 10, "jitter": False},
            },
        )
        add_record(client, tenant, table)
        tocsin.work(now=NOW)
        assert at(the_run(client, tenant, table)["next_attempt_at"]) == s(10)
        tocsin.work(now=s(10))
        run = the_run(client, tenant, table)
    assert (run["status"], run["attempts"], run["error"]) == ("done", 2, None)
    assert run["next_attempt_at"] is None and len(hook.received) == 2


def test_jitter_is_derived_from_the_run_id_and_attempt_and_capped(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [{"type": "webhook", "url": hook.url}],
                "retry": {"max_attempts": 3, "backoff_s": 100, "factor": 10, "max_backoff_s": 150},
            },
        )
        add_record(client, tenant, table)
        tocsin.work(now=NOW)
        run = the_run(client, tenant, table)

        def fraction(attempt: int) -> float:  # an independent reading of the documented rule
            digest = hashlib.sha256(f"{run['id']}:{attempt}".encode()).digest()
            return int.from_bytes(digest[:8], "big") / 2**64

        def ms(seconds: float) -> timedelta:  # delays apply rounded to the millisecond
            return timedelta(milliseconds=round(seconds * 1000))

        first = NOW + ms(100 * (0.5 + 0.5 * fraction(1)))
        assert at(run["next_attempt_at"]) == first
        tocsin.work(now=first)
        second = ms(min(100 * 10, 150) * (0.5 + 0.5 * fraction(2)))  # capped by max_backoff_s
        assert at(the_run(client, tenant, table)["next_attempt_at"]) == first + second


def test_without_a_retry_policy_a_failure_is_final_at_once(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {"on": "created", "actions": [{"type": "webhook", "url": hook.url}]},
        )
        add_record(client, tenant, table)
        tocsin.work(now=NOW)
        run = the_run(client, tenant, table)
    assert (run["status"], run["attempts"], run["next_attempt_at"]) == ("failed", 1, None)
    assert tocsin.work(now=s(3600)) == 0 and len(hook.received) == 1


def test_on_failure_alerts_once_with_the_error_and_a_warning_is_logged(
    client: TestClient,
    tocsin: Tocsin,
    tenant: Tenant,
    table: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with HookReceiver(500) as hook:
        saved = put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [{"type": "webhook", "url": hook.url}],
                "retry": {"max_attempts": 2, "backoff_s": 60, "jitter": False},
                "on_failure": [{"type": "notify", "message": "$trigger.id failed: $run.error"}],
            },
        )
        assert saved["on_failure"][0]["id"]  # alerts get ids too
        add_record(client, tenant, table)
        with caplog.at_level(logging.WARNING, logger="tocsin.runs.worker"):
            tocsin.work(now=NOW)
            assert feed(client, tenant) == []  # a retry is coming: no alert yet
            assert not [r for r in caplog.records if r.levelno == logging.WARNING]
            tocsin.work(now=s(60))
        run = the_run(client, tenant, table)
        assert run["status"] == "failed"
        assert feed(client, tenant) == [f"{saved['id']} failed: {run['error']}"]
        assert "answered 500" in run["error"]
        (line,) = [r for r in caplog.records if r.levelno == logging.WARNING]
        text = line.getMessage()
        assert run["id"] in text and saved["id"] in text and table["id"] in text
        # a moderator's retry that fails again does not alert a second time
        url = table_url(tenant, table, f"/trigger-runs/{run['id']}/retry")
        assert client.post(url, headers=tenant.moderator).status_code == 200
        tocsin.work(now=s(120))
        assert the_run(client, tenant, table)["status"] == "failed"
    assert len(feed(client, tenant)) == 1


def test_a_failing_alert_is_recorded_and_does_not_stop_the_next(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [{"id": "act_main", "type": "webhook", "url": hook.url}],
                "on_failure": [
                    {"id": "act_page", "type": "webhook", "url": hook.url},
                    {"id": "act_note", "type": "notify", "message": "down: $row.Title"},
                ],
            },
        )
        add_record(client, tenant, table)
        tocsin.work(now=NOW)
        run = the_run(client, tenant, table)
    receipts = {r["action_id"]: r["ok"] for r in run["action_results"]}
    assert receipts == {"act_main": False, "act_page": False, "act_note": True}
    assert run["status"] == "failed" and feed(client, tenant) == ["down: Leak"]
    assert run["error"].startswith("POST ")  # the run's error stays the action's, not an alert's


def test_a_run_waiting_for_its_retry_is_not_lost_work_and_a_moderator_may_run_it_now(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500, 200) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "created",
                "actions": [{"type": "webhook", "url": hook.url}],
                "retry": {"max_attempts": 3, "backoff_s": 3600, "jitter": False},
            },
        )
        add_record(client, tenant, table)
        tocsin.work(now=NOW)
        # long past the stale window, but its turn has not come: the sweeps leave it alone
        assert tocsin.tick(now=s(900))["trigger_runs_requeued"] == 0
        assert tocsin.requeue(now=s(900))["requeued"] == 0
        run = the_run(client, tenant, table)
        assert (run["status"], at(run["next_attempt_at"])) == ("pending", s(3600))
        url = table_url(tenant, table, f"/trigger-runs/{run['id']}/retry")
        retried = client.post(url, headers=tenant.moderator).json()
        assert (retried["status"], retried["next_attempt_at"], retried["error"]) == (
            "pending",
            None,
            None,
        )
        assert tocsin.work(now=s(901)) == 1
    assert the_run(client, tenant, table)["status"] == "done" and len(hook.received) == 2


def test_a_schedule_run_waiting_for_its_retry_holds_its_trigger_window(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(500) as hook:
        put_trigger(
            client,
            tenant,
            table,
            {
                "on": "schedule",
                "schedule": {"type": "interval", "every_seconds": 60},
                "actions": [{"type": "webhook", "url": hook.url}],
                "retry": {"max_attempts": 2, "backoff_s": 600, "jitter": False},
            },
        )
        assert tocsin.tick(now=NOW)["runs_created"] == 1
        tocsin.work(now=NOW)
        # the frozen definition carries the policy; while the run waits (SPEC §5.3) no later
        # window is queued, however many pass
        assert tocsin.tick(now=s(300))["runs_created"] == 0
        run = the_run(client, tenant, table)
        assert (run["status"], at(run["next_attempt_at"])) == ("pending", s(600))
        tocsin.work(now=s(600))
        assert the_run(client, tenant, table)["status"] == "failed"
        assert tocsin.tick(now=s(660))["runs_created"] == 1  # one run for the latest window
    assert len(hook.received) == 2
