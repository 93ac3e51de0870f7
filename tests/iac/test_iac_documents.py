"""``tocsin.iac`` pure parts: the JSON Lines format, canonical order, grouping, the diff."""

from __future__ import annotations

import pytest

from tocsin import iac
from tocsin.errors import ValidationError
from tocsin.iac.documents import TableDocuments


def test_canonical_order_and_compact_lines() -> None:
    trigger = {
        "actions": [{"message": "m", "type": "notify", "id": "act_1"}],
        "schedule": {"timezone": "Asia/Taipei", "at": "01:30", "type": "daily"},
        "on": "schedule",
        "id": "trg_1",
        "name": "n",
    }
    line = iac.dumps([iac.canonical("Cases", trigger)])
    assert line == (
        '{"table":"Cases","id":"trg_1","name":"n","on":"schedule",'
        '"schedule":{"type":"daily","at":"01:30","timezone":"Asia/Taipei"},'
        '"actions":[{"id":"act_1","type":"notify","message":"m"}]}\n'
    )


def test_loads_skips_blank_lines_and_names_the_bad_one() -> None:
    text = '{"table":"A"}\r\n\n  \n{"table":"B","name":"x\u2028y\x85z"}\n'
    assert iac.loads(text) == [{"table": "A"}, {"table": "B", "name": "x\u2028y\x85z"}]
    with pytest.raises(ValidationError) as caught:
        iac.loads('{"table":"A"}\n[1]\n')
    assert caught.value.detail.startswith("line 2: ")
    with pytest.raises(ValidationError) as caught:
        iac.loads("{nope\n")
    assert caught.value.detail.startswith("line 1: ")


def test_group_keeps_first_appearance_order_and_table_only_lines() -> None:
    groups = iac.group([{"table": "B", "on": "created"}, {"table": "A"}, {"table": "B", "x": 1}])
    assert [(g.name, g.triggers) for g in groups] == [
        ("B", [{"on": "created"}, {"x": 1}]),
        ("A", []),
    ]
    for bad in ([{"on": "created"}], [{"table": ""}], ["x"], "x"):
        with pytest.raises(ValidationError):
            iac.group(bad)


def test_diff_paths() -> None:
    before = {"name": "a", "schedule": {"type": "daily", "at": "01:30"}, "actions": [{"m": 1}]}
    after = {"schedule": {"type": "daily", "at": "02:30", "timezone": "X"}, "actions": [{"m": 2}]}
    assert iac.diff(before, after) == [
        {"path": "name", "before": "a"},
        {"path": "schedule.at", "before": "01:30", "after": "02:30"},
        {"path": "schedule.timezone", "after": "X"},
        {"path": "actions[0].m", "before": 1, "after": 2},
    ]
    assert iac.diff([1], [1, 2], "when") == [{"path": "when", "before": [1], "after": [1, 2]}]


def test_plan_table_orders_entries_and_records_creates() -> None:
    stored = [
        {"id": "trg_a", "on": "created", "actions": []},
        {"id": "trg_b", "on": "updated", "actions": []},
    ]
    documents = TableDocuments(
        "T", [{"on": "deleted", "actions": []}, {"id": "trg_b", "on": "updated", "actions": []}]
    )
    plan = iac.plan_table(documents, stored)
    assert [(e["action"], e["trigger_id"]) for e in plan.entries] == [
        ("create", None),
        ("noop", "trg_b"),
        ("delete", "trg_a"),
    ]
    assert plan.created == {0: 0} and plan.changed
    assert [t.get("id") for t in plan.config] == [None, "trg_b"]
