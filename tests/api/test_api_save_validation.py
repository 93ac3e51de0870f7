"""Validation at save, not at run time, over HTTP: the SPEC texts stay exact and the
help (the table's columns, the nearest zone names) is appended after them."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import COLUMNS, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.service import Tocsin

COLUMN_LIST = "columns: " + ", ".join(COLUMNS)
NOTIFY = {"type": "notify", "message": "hi"}


def put(client: TestClient, tenant: Tenant, table: dict[str, Any], trigger: dict[str, Any]) -> Any:
    return client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [trigger]},
        headers=tenant.moderator,
    )


def refused(
    client: TestClient, tenant: Tenant, table: dict[str, Any], trigger: dict[str, Any]
) -> str:
    resp = put(client, tenant, table, trigger)
    assert resp.status_code == 400, resp.text
    detail: str = resp.json()["detail"]
    # nothing was written
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert got["triggers"] == []
    return detail


@pytest.mark.parametrize(
    "url", ["ftp://files.example/x", "hooks.example/in", "https://", "http:///path", "file:///etc"]
)
@pytest.mark.parametrize("kind", ["webhook", "api_call"])
def test_an_outbound_url_must_be_http_with_a_host(
    client: TestClient, tenant: Tenant, table: dict[str, Any], url: str, kind: str
) -> None:
    action = {"type": kind, "url": url} | ({"method": "POST"} if kind == "api_call" else {})
    detail = refused(client, tenant, table, {"on": "created", "actions": [action]})
    assert detail == messages.action_invalid(
        f"{kind} action url must be an http:// or https:// URL with a host (got {url!r})"
    )


@pytest.mark.parametrize(
    "url", ["https://hooks.example/$row.Title", "$row.Title", "https://$row.Status.example/x"]
)
def test_templated_urls_are_checked_as_far_as_they_are_written(
    client: TestClient, tenant: Tenant, table: dict[str, Any], url: str
) -> None:
    trigger = {"on": "created", "actions": [{"type": "webhook", "url": url}]}
    assert put(client, tenant, table, trigger).status_code == 200


@pytest.mark.parametrize("token", ["$row.Nope", "${row.Due Date}", "$row."])
def test_a_row_token_must_name_a_column(
    client: TestClient, tenant: Tenant, table: dict[str, Any], token: str
) -> None:
    name = token.removeprefix("$row.").removeprefix("${row.").removesuffix("}")
    action = {"type": "webhook", "url": "https://hooks.example/in", "payload": {"x": [token]}}
    detail = refused(client, tenant, table, {"on": "created", "actions": [action]})
    assert detail == messages.action_invalid(
        f"webhook action uses '$row.{name}' but this table has no column '{name}'. {COLUMN_LIST}"
    )


def test_row_tokens_of_real_columns_and_the_record_id_pass(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    message = "$row.Title is ${row.Status} ($row.id, $row.Titled, $row.Points!)"
    assert (
        put(
            client,
            tenant,
            table,
            {"on": "created", "actions": [{"type": "notify", "message": message}]},
        ).status_code
        == 200
    )


@pytest.mark.parametrize("key", ["actions", "on_failure"])
def test_an_empty_action_list_is_refused(
    client: TestClient, tenant: Tenant, table: dict[str, Any], key: str
) -> None:
    trigger: dict[str, Any] = {"on": "created", "actions": [NOTIFY]} | {key: []}
    detail = refused(client, tenant, table, trigger)
    assert detail == messages.action_invalid(
        f"{key} must hold at least one action (got an empty list)"
    )


def test_a_missing_column_lists_the_tables_columns(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    when = [{"column": "Stat", "op": "eq", "value": "x"}]
    detail = refused(client, tenant, table, {"on": "created", "when": when, "actions": [NOTIFY]})
    assert detail == f"{messages.when_column_missing('Stat')}. {COLUMN_LIST}"
    schedule = {"type": "date_column_reached", "column": "Deu"}
    detail = refused(
        client, tenant, table, {"on": "schedule", "schedule": schedule, "actions": [NOTIFY]}
    )
    assert detail == f"{messages.schedule_column_missing('Deu')}. {COLUMN_LIST}"


def test_an_unknown_zone_answers_the_nearest_names(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    schedule = {"type": "daily", "at": "09:00", "timezone": "Europe/Berln"}
    detail = refused(
        client, tenant, table, {"on": "schedule", "schedule": schedule, "actions": [NOTIFY]}
    )
    seed = messages.daily_timezone_unknown("Europe/Berln")
    assert detail.startswith(seed + " (did you mean 'Europe/Berlin'")
    cron = {"type": "cron", "expression": "0 9 * * *", "timezone": "Mars/Olympus"}
    detail = refused(
        client, tenant, table, {"on": "schedule", "schedule": cron, "actions": [NOTIFY]}
    )
    assert detail == messages.daily_timezone_unknown("Mars/Olympus")  # nothing close: exact text


@pytest.mark.parametrize("written", ["europe/berlin", "EUROPE/BERLIN", "Europe/berlin"])
def test_any_case_of_a_known_zone_is_stored_as_iana_spells_it(
    client: TestClient, tenant: Tenant, table: dict[str, Any], written: str
) -> None:
    schedule = {"type": "daily", "at": "09:00", "timezone": written}
    resp = put(client, tenant, table, {"on": "schedule", "schedule": schedule, "actions": [NOTIFY]})
    assert resp.status_code == 200, resp.text
    assert resp.json()["triggers"][0]["schedule"]["timezone"] == "Europe/Berlin"
    utc = {"type": "cron", "expression": "0 9 * * *", "timezone": "utc"}
    resp = put(client, tenant, table, {"on": "schedule", "schedule": utc, "actions": [NOTIFY]})
    assert resp.json()["triggers"][0]["schedule"] == {"type": "cron", "expression": "0 9 * * *"}


@pytest.mark.parametrize(
    ("retry", "reason"),
    [
        ({}, "retry max_attempts must be an integer in [1, 25] (got None)"),
        ({"max_attempts": True}, "retry max_attempts must be an integer in [1, 25] (got True)"),
        ({"max_attempts": 0}, "retry max_attempts must be an integer in [1, 25] (got 0)"),
        (
            {"max_attempts": 3, "backoff_s": 0},
            "retry backoff_s must be a number in (0, 604800] (got 0)",
        ),
        ({"max_attempts": 3, "factor": 0.5}, "retry factor must be a number in [1, 10] (got 0.5)"),
        (
            {"max_attempts": 3, "backoff_s": 60, "max_backoff_s": 30},
            "retry max_backoff_s must be a number in [backoff_s, 604800] (got 30)",
        ),
        ({"max_attempts": 3, "jitter": "yes"}, "retry jitter must be true or false (got 'yes')"),
        (
            {"max_attempts": 3, "delay": 5},
            "retry has unknown key(s) 'delay'. allowed keys: max_attempts, backoff_s, factor, "
            "max_backoff_s, jitter",
        ),
        ([3], 'retry must be an object like {"max_attempts": 5, "backoff_s": 30}'),
    ],
)
def test_a_bad_retry_policy_is_refused_with_its_reason(
    client: TestClient, tenant: Tenant, table: dict[str, Any], retry: Any, reason: str
) -> None:
    detail = refused(client, tenant, table, {"on": "created", "actions": [NOTIFY], "retry": retry})
    assert detail == messages.trigger_invalid(reason)


def test_a_retry_policy_is_stored_as_written(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    retry = {"max_attempts": 5, "backoff_s": 30, "factor": 2, "max_backoff_s": 3600, "jitter": True}
    resp = put(client, tenant, table, {"on": "created", "actions": [NOTIFY], "retry": retry})
    assert resp.status_code == 200 and resp.json()["triggers"][0]["retry"] == retry
    short = {"max_attempts": 2}
    resp = put(client, tenant, table, {"on": "created", "actions": [NOTIFY], "retry": short})
    assert resp.json()["triggers"][0]["retry"] == short  # no default filled in (IaC stays stable)


@pytest.mark.parametrize("method", ["GET", "DELETE", "post", 7])
def test_a_webhook_method_is_post_put_or_patch(
    client: TestClient, tenant: Tenant, table: dict[str, Any], method: Any
) -> None:
    action = {"type": "webhook", "url": "https://hooks.example/in", "method": method}
    detail = refused(client, tenant, table, {"on": "created", "actions": [action]})
    assert detail == messages.action_invalid(
        "webhook action 'method' must be one of POST, PUT, PATCH"
    )


def test_an_alert_id_may_not_repeat_an_action_id(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    trigger = {
        "on": "created",
        "actions": [{"id": "act_a", **NOTIFY}],
        "on_failure": [{"id": "act_a", **NOTIFY}],
    }
    detail = refused(client, tenant, table, trigger)
    assert "act_a" in detail and "on_failure" in detail


# ---- the naive-UTC rule, said out loud (SPEC §4.1) ---------------------------------------------


def test_a_datetime_offset_is_ignored_and_the_write_says_so(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    url = table_url(tenant, table, "/records")
    resp = client.post(
        url, json={"data": {"Due": "2026-09-01T09:00+08:00"}}, headers=tenant.moderator
    )
    assert resp.status_code == 201, resp.text
    record = resp.json()
    assert record["data"]["Due"] == "2026-09-01T09:00+08:00"  # stored as written
    assert record["warnings"] == [
        messages.datetime_offset_ignored("Due", "2026-09-01T09:00+08:00", "+08:00")
    ]
    assert "ignored, not converted" in record["warnings"][0]
    patch = client.patch(
        f"{url}/{record['id']}",
        json={"data": {"Due": "2026-09-02T10:00-0530"}},
        headers=tenant.moderator,
    )
    assert patch.status_code == 200
    assert patch.json()["warnings"] == [
        messages.datetime_offset_ignored("Due", "2026-09-02T10:00-0530", "-0530")
    ]
    facade = tocsin.update_record(table["id"], record["id"], {"Due": "2026-09-03T10:00+01:00"})
    assert len(facade["warnings"]) == 1


@pytest.mark.parametrize(
    "data",
    [
        {"Due": "2026-09-01T09:00Z"},
        {"Due": "2026-09-01T09:00+00:00"},
        {"Due": "2026-09-01 09:00"},
        {"Title": "at 09:00+08:00"},
        {"Due": None},
    ],
)
def test_cells_without_a_dropped_offset_answer_no_warning(
    client: TestClient, tenant: Tenant, table: dict[str, Any], data: dict[str, Any]
) -> None:
    resp = client.post(
        table_url(tenant, table, "/records"), json={"data": data}, headers=tenant.moderator
    )
    assert resp.status_code == 201 and resp.json()["warnings"] == []


@pytest.mark.parametrize(
    "headers",
    [{"X-Note": "ok\r\nX-Injected: 1"}, {"X-Note": "a\nb"}, {"X-Note": "a\rb"}, {"X Note": "a"}],
)
def test_a_header_that_would_break_every_request_is_refused_at_save(
    client: TestClient, tenant: Tenant, table: dict[str, Any], headers: dict[str, str]
) -> None:
    hook = {"type": "webhook", "url": "https://hooks.example/in", "headers": headers}
    trigger = {"on": "created", "actions": [hook]}
    detail = refused(client, tenant, table, trigger)
    assert detail.endswith(
        "webhook action 'headers' must be an object of header names (RFC 9110 tokens) to "
        "string values without CR, LF or NUL"
    ), detail


def test_templated_header_values_are_still_accepted(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    headers = {"Authorization": "Bearer $row.Title", "X-Trace_id.v2": "t-$row.id"}
    hook = {"type": "webhook", "url": "https://hooks.example/in", "headers": headers}
    resp = put(client, tenant, table, {"on": "created", "actions": [hook]})
    assert resp.status_code == 200, resp.text
