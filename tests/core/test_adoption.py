"""``core.config.adoption``: structural equality and id adoption (SPEC §5, §11). Pure."""

from __future__ import annotations

from typing import Any

from tocsin.core.config.adoption import adopt_ids, comparable, match_triggers, structurally_equal

STORED: dict[str, Any] = {
    "id": "trg_1",
    "name": "n",
    "on": "schedule",
    "schedule": {"type": "daily", "at": "01:30"},
    "actions": [{"id": "act_1", "type": "notify", "message": "m"}],
}


def authored(**changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in STORED.items() if k != "id"}
    out["actions"] = [{"type": "notify", "message": "m"}]
    out.update(changes)
    return out


def test_comparable_applies_omit_when_default_and_drops_empty_when() -> None:
    explicit = authored(schedule={"type": "daily", "at": "01:30", "timezone": "UTC"}, when=[])
    assert comparable(explicit) == comparable(authored())
    boolean = {"type": "date_column_reached", "column": "D", "offset_minutes": False}
    assert comparable({"schedule": boolean})["schedule"] == boolean  # never normalized away


def test_structural_equality_ignores_only_the_ids_left_out() -> None:
    assert structurally_equal(authored(), STORED)
    assert structurally_equal(authored(id="trg_1"), STORED)
    assert not structurally_equal(authored(id="trg_2"), STORED)
    assert not structurally_equal(authored(name="other"), STORED)
    with_action_id = authored(actions=[{"id": "act_9", "type": "notify", "message": "m"}])
    assert not structurally_equal(with_action_id, STORED)


def test_adopt_ids_fills_stored_ids_once_each() -> None:
    twin = {**STORED, "id": "trg_2", "actions": [{"id": "act_2", "type": "notify", "message": "m"}]}
    raw = [authored(), authored(), authored()]
    adopted = adopt_ids(raw, [STORED, twin])
    assert isinstance(adopted, list)
    assert [t.get("id") for t in adopted] == ["trg_1", "trg_2", None]
    assert adopted[0]["actions"][0]["id"] == "act_1"
    assert "id" not in adopted[2]["actions"][0]


def test_an_id_named_by_another_trigger_is_not_adopted() -> None:
    raw = [authored(), {**authored(), "id": "trg_1"}]
    assert [(m.stored, m.adopted) for m in match_triggers(raw, [STORED])] == [
        (None, False),
        (0, False),
    ]


def test_malformed_input_is_left_for_validation() -> None:
    assert adopt_ids("nope", [STORED]) == "nope"
    odd: list[Any] = [{"id": ["x"], "on": "created"}, 5, {"id": 7}]
    assert adopt_ids(odd, [STORED, {"id": "7"}]) == odd
