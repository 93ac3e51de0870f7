"""Receipts, truncation and where a retry resumes (SPEC §8, §9.2)."""

from __future__ import annotations

from tocsin.core.config.receipts import (
    make_receipt,
    pending_actions,
    truncate_error,
    upsert_receipt,
)

ACTIONS = [
    {"id": "a1", "type": "notify"},
    {"id": "a2", "type": "webhook"},
    {"id": "a3", "type": "notify"},
]


def test_make_receipt_truncates_detail_to_300() -> None:
    receipt = make_receipt("a1", "webhook", False, "x" * 500)
    assert receipt == {"action_id": "a1", "type": "webhook", "ok": False, "detail": "x" * 300}
    assert make_receipt("a1", "notify", True)["detail"] is None
    assert make_receipt("a1", "notify", True, "short")["detail"] == "short"


def test_truncate_error_to_1000() -> None:
    assert truncate_error("e" * 1500) == "e" * 1000
    assert truncate_error("boom") == "boom"
    assert truncate_error(ValueError("bad")) == "bad"


def resume_index(actions: list[dict[str, str]], receipts: list[object]) -> int:
    """Where a retry resumes: the first pending action (``len(actions)`` when all are done)."""
    pending = pending_actions(actions, receipts)
    return pending[0][0] if pending else len(actions)


def test_pending_actions_skip_done_ones_wherever_they_stand() -> None:
    receipts = [make_receipt("a1", "notify", True), make_receipt("a3", "notify", True)]
    assert pending_actions(ACTIONS, receipts) == [(1, ACTIONS[1])]


def test_resume_by_action_id() -> None:
    assert resume_index(ACTIONS, []) == 0
    ok_a1 = make_receipt("a1", "notify", True)
    assert resume_index(ACTIONS, [ok_a1]) == 1
    failed_a2 = make_receipt("a2", "webhook", False, "503")
    assert resume_index(ACTIONS, [ok_a1, failed_a2]) == 1
    all_ok = [make_receipt(a["id"], a["type"], True) for a in ACTIONS]
    assert resume_index(ACTIONS, all_ok) == 3


def test_resume_matches_ids_not_positions() -> None:
    # receipts stored in a different order still count
    receipts = [make_receipt("a2", "webhook", True), make_receipt("a1", "notify", True)]
    assert resume_index(ACTIONS, receipts) == 2
    # an action inserted before a done one is not skipped
    reordered = [{"id": "new", "type": "notify"}, *ACTIONS]
    assert resume_index(reordered, [make_receipt("a1", "notify", True)]) == 0


def test_legacy_receipts_fall_back_to_position() -> None:
    legacy = [{"type": "notify", "ok": True}, {"type": "webhook", "ok": False, "detail": "x"}]
    assert resume_index(ACTIONS, legacy) == 1
    assert (
        resume_index(ACTIONS, [{"type": "notify", "ok": True}, {"type": "webhook", "ok": True}])
        == 2
    )


def test_odd_receipts_are_ignored() -> None:
    assert resume_index(ACTIONS, ["x", None, {"action_id": "a1", "ok": "yes"}]) == 0


def test_upsert_receipt() -> None:
    first = make_receipt("a1", "notify", False, "x")
    second = make_receipt("a1", "notify", True)
    receipts = upsert_receipt([first], second)
    assert receipts == [second]
    assert upsert_receipt(receipts, make_receipt("a2", "webhook", True))[1]["action_id"] == "a2"
