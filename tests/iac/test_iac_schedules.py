"""Schedule documents: imperative workflow schedules (cron or a trigger tree) in ``export`` /
``plan`` / ``apply`` (SPEC §11, §12, §13).

Every test runs on SQLite and PostgreSQL (the conftest ``tocsin`` fixture). Time is explicit.
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import iac, messages
from tocsin.errors import ValidationError
from tocsin.iac.schedules import ORDER
from tocsin.service import Tocsin
from workflows.helpers import daily, every_minute

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
DAILY = "daily-report"
TICK = "tick-tock"


@pytest.fixture
def app(tocsin: Tocsin) -> Tocsin:
    tocsin.register_workflows([daily(), every_minute(TICK)])
    tocsin.sync_schedules(now=NOW)  # the declared wf_daily-report and wf_tick-tock
    return tocsin


def table_id(t: Tocsin, name: str = "Orders") -> str:
    return str(t.create_table("chatroom", str(uuid.uuid4()), name, {"N": "number"}, now=NOW)["id"])


def tree_of(table: str) -> dict[str, Any]:
    return {
        "all": [
            {"cron": "0 9 * * *", "timezone": "Europe/Berlin"},
            {"event": "table_updated", "table_id": table},
        ]
    }


def seed(t: Tocsin) -> dict[str, str]:
    """Three imperative schedules through ``schedules.create`` (the API's path)."""
    table = table_id(t)
    made = {
        "tree": t.schedules.create(
            workflow_id=DAILY, trigger=tree_of(table), timezone="UTC", input_data={"user_id": "a"},
            now=NOW,
        ),
        "cron": t.schedules.create(
            workflow_id=DAILY, cron="*/5  * * * *", timezone="Asia/Taipei", overlap="allow",
            input_data={"user_id": "b"}, now=NOW,
        ),
        "any": t.schedules.create(
            workflow_id=TICK, timezone="UTC", now=NOW,
            trigger={"any": [{"event": "schedule_succeeded", "schedule_id": "wf_daily-report"},
                             {"cron": "0 0 1 * *", "repeated": "first", "missing": "shift"}]},
        ),
    }  # fmt: skip
    out = {k: str(v["id"]) for k, v in made.items()}
    out["table"] = table
    return out


def actions(entries: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    return [(e["workflow"], e["schedule_id"], e["action"]) for e in entries]


def count(t: Tocsin) -> int:
    return int(t.schedules.list(limit=500)["total"])


def test_export_is_normalized_byte_stable_and_plans_as_noop(app: Tocsin) -> None:
    ids = seed(app)
    documents = app.export_schedules()
    text = iac.dumps(documents)
    assert iac.dumps(app.export_schedules()) == text
    assert iac.dumps(iac.loads(text)) == text
    by_id = {d["id"]: d for d in documents}
    assert set(by_id) == {ids["tree"], ids["cron"], ids["any"]}  # declared wf_… left out
    assert by_id[ids["tree"]] == {
        "workflow": DAILY,
        "id": ids["tree"],
        "trigger": tree_of(ids["table"]),
        "timezone": "UTC",
        "input_data": {"user_id": "a"},
    }
    assert by_id[ids["cron"]] == {
        "workflow": DAILY,
        "id": ids["cron"],
        "cron": "*/5 * * * *",
        "timezone": "Asia/Taipei",
        "overlap": "allow",
        "input_data": {"user_id": "b"},
    }
    assert by_id[ids["any"]]["trigger"] == {
        "any": [
            {"event": "schedule_succeeded", "schedule_id": "wf_daily-report"},
            {"cron": "0 0 1 * *", "repeated": "first", "missing": "shift"},
        ]
    }
    assert list(by_id[ids["tree"]]) == ["workflow", "id", "trigger", "timezone", "input_data"]
    plan = app.plan(None, None, iac.loads(text))
    assert {e["action"] for e in plan} == {"noop"} and len(plan) == 3
    assert app.export_schedules([TICK]) == [by_id[ids["any"]]]
    assert app.export_schedules("nobody") == []


def test_explicit_defaults_and_documents_without_ids_plan_as_noop(app: Tocsin) -> None:
    ids = seed(app)
    documents = app.export_schedules()
    explicit = copy.deepcopy(documents)
    for document in explicit:
        document.pop("id")  # adopted by structure
        document.setdefault("overlap", "skip")
        document.update(catch_up="latest", max_catch_up=100, request_context=None)
        for leaf in document.get("trigger", {}).get("all", []):
            if "cron" in leaf:
                leaf.update(repeated="both", missing="skip")
    tree = next(d for d in explicit if "all" in d.get("trigger", {}))
    tree["trigger"]["all"][0]["cron"] = " 0  9 * * * "
    plan = app.plan(None, None, explicit)
    assert [e["action"] for e in plan] == ["noop"] * 3
    assert all(e["adopted"] for e in plan)
    assert sorted(e["schedule_id"] for e in plan) == sorted([ids["tree"], ids["cron"], ids["any"]])
    # a leaf zone equal to the schedule's is the same schedule as one inheriting it
    inherit = copy.deepcopy(next(d for d in documents if d["id"] == ids["cron"]))
    assert app.plan(None, None, [inherit])[0]["action"] == "noop"
    assert app.apply(None, None, explicit, now=NOW) == plan
    assert count(app) == 5


def test_create_update_delete_and_the_deletion_scope(app: Tocsin) -> None:
    ids = seed(app)
    before = {s["id"]: s for s in app.schedules.list(limit=500)["items"]}
    documents = {d["id"]: d for d in app.export_schedules()}
    cron = documents[ids["cron"]] | {"cron": "*/10 * * * *"}  # timing: rescheduled
    tree = documents[ids["tree"]] | {"input_data": {"user_id": "z"}}  # payload: patched
    new = {"workflow": DAILY, "cron": "0 12 * * *", "timezone": "UTC", "metadata": {"k": 1}}
    bundle = [tree, cron, new]  # DAILY managed; TICK not named: its schedule is not looked at
    plan = app.plan(None, None, bundle)
    assert actions(plan) == [
        (DAILY, ids["tree"], "update"),
        (DAILY, ids["cron"], "update"),
        (DAILY, None, "create"),
    ]
    assert plan[1]["changes"] == [
        {"path": "cron", "before": "*/5 * * * *", "after": "*/10 * * * *"}
    ]
    at = NOW + timedelta(minutes=7)
    done = app.apply(None, None, bundle, now=at)
    created = done[2]["schedule_id"]
    assert created.startswith("sch_") and created not in ids.values()
    after = {s["id"]: s for s in app.schedules.list(limit=500)["items"]}
    assert set(after) == set(before) | {created}
    assert after[ids["cron"]]["cron"] == "*/10 * * * *"
    assert after[ids["cron"]]["next_fire_at"] == NOW + timedelta(minutes=10)
    assert after[ids["tree"]]["input_data"] == {"user_id": "z"}
    assert after[ids["tree"]]["next_fire_at"] == before[ids["tree"]]["next_fire_at"]  # kept
    assert after[created]["source"] == "imperative" and after[created]["metadata"] == {"k": 1}
    replanned = app.plan(None, None, [*bundle, {"workflow": DAILY}])
    assert actions(replanned) == [
        (DAILY, sid, "noop") for sid in (ids["tree"], ids["cron"], created)
    ]
    assert replanned[2]["adopted"] is True  # the document without id is the schedule it made

    # the cron schedule left out: deleted; a line with only "workflow" manages TICK, now empty
    bundle = [dict(tree, id=ids["tree"]), dict(new, id=created), {"workflow": TICK}]
    plan = app.apply(None, None, bundle, now=at)
    assert actions(plan) == [
        (DAILY, ids["tree"], "noop"),
        (DAILY, created, "noop"),
        (DAILY, ids["cron"], "delete"),
        (TICK, ids["any"], "delete"),
    ]
    left = {s["id"] for s in app.schedules.list(limit=500)["items"]}
    assert left == {ids["tree"], created, "wf_daily-report", "wf_tick-tock"}


def test_a_document_id_not_stored_creates_under_that_id_and_apply_is_idempotent(
    app: Tocsin,
) -> None:
    table = table_id(app)
    bundle = [
        {"workflow": DAILY, "id": "sch_berlin-nine", "trigger": tree_of(table), "timezone": "UTC"},
        {
            "workflow": TICK,
            "id": "sch_after-berlin",
            "timezone": "UTC",
            "trigger": {
                "all": [
                    {"event": "schedule_succeeded", "schedule_id": "sch_berlin-nine"},
                    {"event": "table_updated", "table_id": table},
                ]
            },
        },
    ]
    first = app.apply(None, None, bundle, now=NOW)
    assert actions(first) == [
        (DAILY, "sch_berlin-nine", "create"),
        (TICK, "sch_after-berlin", "create"),
    ]
    shown = app.schedules.get("sch_berlin-nine", now=NOW)
    assert shown["description"] and shown["trigger"] is not None
    assert shown["next_fire_at"] == datetime(2026, 3, 3, 8, 0, tzinfo=UTC)  # 09:00 Berlin
    again = app.apply(None, None, bundle, now=NOW + timedelta(hours=1))
    assert [e["action"] for e in again] == ["noop", "noop"]
    assert count(app) == 4
    exported = app.export_schedules()
    assert exported == [
        {**bundle[0], "trigger": tree_of(table)},
        bundle[1],
    ]
    assert app.export_schedules() == exported  # same bytes again


def test_a_tree_round_trips_like_the_api_creates_it(app: Tocsin) -> None:
    table = table_id(app)
    tree = {
        "any": [
            {"all": [{"cron": "30 8 * * MON-FRI"}, {"event": "table_updated", "table_id": table}]},
            {"event": "definition_changed", "workflow_id": DAILY},
            {"cron": "0 0 L * *", "timezone": "Asia/Tokyo", "repeated": "first"},
        ]
    }
    via_api = app.schedules.create(workflow_id=TICK, trigger=tree, timezone="Europe/Paris", now=NOW)
    [exported] = app.export_schedules()
    assert exported["trigger"] == tree and exported["timezone"] == "Europe/Paris"
    [entry] = app.apply(None, None, [{k: v for k, v in exported.items() if k != "id"}], now=NOW)
    assert entry["action"] == "noop" and entry["schedule_id"] == via_api["id"]
    copied = {k: v for k, v in exported.items() if k != "id"} | {"workflow": DAILY}
    [created] = app.apply(None, None, [copied], now=NOW)
    assert created["action"] == "create"
    assert app.export_schedules([DAILY])[0]["trigger"] == tree


def refused(t: Tocsin, documents: list[dict[str, Any]]) -> str:
    with pytest.raises(ValidationError) as caught:
        t.plan(None, None, documents)
    with pytest.raises(ValidationError) as again:
        t.apply(None, None, documents, now=NOW)
    assert again.value.detail == caught.value.detail
    return caught.value.detail


def test_bad_documents_fail_with_the_api_text_and_nothing_is_written(app: Tocsin) -> None:
    ids = seed(app)
    good = {"workflow": DAILY, "cron": "0 1 * * *", "timezone": "UTC"}
    before = app.export_schedules()
    gone = str(uuid.uuid4())
    cases: list[tuple[dict[str, Any], str]] = [
        ({"workflow": "nope", "cron": "0 1 * * *"}, messages.workflow_unknown("nope")),
        (
            {"workflow": DAILY, "timezone": "UTC", "trigger": tree_of(gone)},
            messages.trigger_table_unknown("(new)", gone),
        ),
        ({"workflow": DAILY, "timezone": "UTC", "trigger": {"all": []}}, "all"),
        ({"workflow": DAILY, "timezone": "UTC", "cron": "61 * * * *"}, "61"),
        (
            {"workflow": DAILY, "timezone": "UTC", "cron": "* * * * *", "trigger": tree_of(gone)},
            messages.schedule_cron_or_trigger("both"),
        ),
        ({"workflow": DAILY, "timezone": "Mars/Base", "cron": "* * * * *"}, "Mars/Base"),
        (
            {"workflow": DAILY, "cron": "* * * * *", "timezone": "UTC", "paused": True},
            messages.iac_schedule_keys_unknown(["paused"], list(ORDER)),
        ),
        (
            {"workflow": DAILY, "id": "wf_daily-report", "cron": "* * * * *", "timezone": "UTC"},
            messages.iac_schedule_id_invalid("wf_daily-report"),
        ),
        (
            {"workflow": TICK, "id": ids["cron"], "cron": "* * * * *", "timezone": "UTC"},
            messages.iac_schedule_other_workflow(ids["cron"], DAILY, TICK),
        ),
        ({"workflow": DAILY, "table": "Orders"}, messages.IAC_DOCUMENT_BOTH_KINDS),
    ]
    for document, text in cases:
        detail = refused(app, [good, document])
        assert text in detail, (document, detail)
        assert detail.startswith("document 2: "), detail
    twice = {"workflow": DAILY, "id": ids["cron"], "cron": "* * * * *", "timezone": "UTC"}
    assert refused(app, [twice, twice]) == messages.iac_document_invalid(
        2, messages.iac_schedule_id_twice(ids["cron"])
    )
    empty = {"workflow": DAILY, "timezone": "UTC", "trigger": {"any": []}}
    assert "any" in refused(app, [empty])
    assert app.export_schedules() == before
    assert count(app) == 5
    with pytest.raises(ValidationError) as caught:
        app.plan(None, None, [{"table": "Orders"}])
    assert caught.value.detail == messages.IAC_TABLES_NEED_SCOPE
    with pytest.raises(ValidationError) as caught:
        app.plan("chatroom", str(uuid.uuid4()), [good], schedules=False)
    assert caught.value.detail == messages.IAC_SCHEDULES_NOT_HERE


def test_one_bundle_holds_trigger_and_schedule_documents(app: Tocsin) -> None:
    scope_id = str(uuid.uuid4())
    table = app.create_table("chatroom", scope_id, "Cases", {"N": "number"}, now=NOW)
    hourly = {
        "name": "hourly",
        "on": "schedule",
        "schedule": {"type": "cron", "expression": "0 * * * *", "timezone": "UTC"},
        "actions": [{"type": "notify", "message": "tick"}],
    }
    schedule = {"workflow": DAILY, "cron": "0 7 * * *", "timezone": "UTC"}
    bad = {**schedule, "cron": "nope"}
    with pytest.raises(ValidationError):  # a bad schedule document: the table is not written
        app.apply("chatroom", scope_id, [{"table": "Cases", **hourly}, bad], now=NOW)
    assert app.get_triggers(table["id"]) == []
    done = app.apply("chatroom", scope_id, [{"table": "Cases", **hourly}, schedule], now=NOW)
    assert [e["action"] for e in done] == ["create", "create"]
    assert done[0]["table"] == "Cases" and done[1]["workflow"] == DAILY
    bundle = app.export("chatroom", scope_id) + app.export_schedules()
    assert [e["action"] for e in app.plan("chatroom", scope_id, bundle)] == ["noop", "noop"]
