"""SPEC §9.6: the approval gate — write actions on a requires_approval table stage changes; a
moderator approves or rejects; approved changes are applied by a worker; lost applications are
requeued by the tick's sweep."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import Conflict, NotFound, TransientStoreError, ValidationError
from tocsin.service import Tocsin
from tocsin.store import records as store_records
from tocsin.store.approvals import claim_approved_change

from .helpers import LATER, NOW, STALE, no_wait

COLUMNS = {"Title": "text", "Status": "text"}


ROOM = str(uuid.uuid4())  # one tenant: actions reach only tables of their own scope


def table(t: Tocsin, *, gated: bool = False) -> dict[str, Any]:
    return t.create_table("chatroom", ROOM, "T", COLUMNS, requires_approval=gated, now=NOW)


def on_created(t: Tocsin, table_id: str, *actions: dict[str, Any]) -> None:
    t.set_triggers(table_id, [{"on": "created", "actions": list(actions)}], now=NOW)


def staged_copy(t: Tocsin) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A source table whose created rows are copied into a gated table; one row inserted."""
    source, gated = table(t), table(t, gated=True)
    on_created(
        t,
        source["id"],
        {"type": "create_record", "table_id": gated["id"], "values": {"Title": "$row.Title"}},
    )
    t.insert_records(source["id"], [{"Title": "Leak"}], now=NOW)
    t.work(now=LATER)
    (change,) = t.list_staged_changes(gated["id"])["items"]
    return source, gated, change


def test_write_on_gated_table_stages_instead_of_writing(tocsin: Tocsin) -> None:
    source, gated, change = staged_copy(tocsin)
    assert tocsin.list_records(gated["id"])["items"] == []
    assert change["status"] == "staged" and change["operation"] == "create"
    assert change["values"] == {"Title": "Leak"}
    (run,) = tocsin.list_runs(source["id"], now=LATER)["items"]
    assert run["status"] == "done"
    assert run["action_results"][0]["detail"] == (
        f"staged change {change['id']} awaits approval (create)"
    )


def test_approved_change_is_applied_by_the_worker(tocsin: Tocsin) -> None:
    _, gated, change = staged_copy(tocsin)
    approved = tocsin.approve_change(gated["id"], change["id"], now=LATER)
    assert approved["status"] == "approved" and approved["decided_at"] == LATER
    tocsin.work(now=LATER)
    (record,) = tocsin.list_records(gated["id"])["items"]
    assert record["data"] == {"Title": "Leak"}
    (applied,) = tocsin.list_staged_changes(gated["id"], status="applied")["items"]
    assert applied["applied_at"] == LATER


def test_rejected_change_writes_nothing_and_decisions_are_final(tocsin: Tocsin) -> None:
    _, gated, change = staged_copy(tocsin)
    assert tocsin.reject_change(gated["id"], change["id"], now=LATER)["status"] == "rejected"
    tocsin.work(now=LATER)
    assert tocsin.list_records(gated["id"])["items"] == []
    with pytest.raises(Conflict) as err:
        tocsin.approve_change(gated["id"], change["id"], now=LATER)
    assert err.value.detail == messages.staged_change_decided("rejected")


def test_unknown_change_or_other_table_is_404(tocsin: Tocsin) -> None:
    _, gated, change = staged_copy(tocsin)
    other = table(tocsin)
    with pytest.raises(NotFound):
        tocsin.approve_change(gated["id"], "nope", now=LATER)
    with pytest.raises(NotFound):
        tocsin.reject_change(other["id"], change["id"], now=LATER)
    with pytest.raises(NotFound):
        tocsin.list_staged_changes(str(uuid.uuid4()))
    with pytest.raises(ValidationError):
        tocsin.list_staged_changes(gated["id"], status="bogus")


def test_update_and_delete_on_a_gated_table_are_staged_with_the_record(tocsin: Tocsin) -> None:
    gated = table(tocsin, gated=True)
    on_created(
        tocsin,
        gated["id"],
        {"type": "update_record", "record": "$row", "values": {"Status": "Seen"}},
        {"type": "delete_record", "record": "$row"},
    )
    (rid,) = tocsin.insert_records(gated["id"], [{"Title": "x"}], now=NOW)
    tocsin.work(now=LATER)
    changes = tocsin.list_staged_changes(gated["id"])["items"]
    assert [(c["operation"], c["record_id"]) for c in changes] == [("update", rid), ("delete", rid)]
    for change in changes:
        tocsin.approve_change(gated["id"], change["id"], now=LATER)
    tocsin.work(now=LATER)
    assert tocsin.list_records(gated["id"])["items"] == []  # updated, then trashed
    statuses = [c["status"] for c in tocsin.list_staged_changes(gated["id"])["items"]]
    assert statuses == ["applied", "applied"]


def test_retrying_a_run_does_not_stage_the_same_change_twice(tocsin: Tocsin) -> None:
    source, gated = table(tocsin), table(tocsin, gated=True)
    on_created(
        tocsin,
        source["id"],
        {"type": "create_record", "table_id": gated["id"], "values": {"Title": "$row.Title"}},
        {"type": "invoke_command", "command": "missing"},
    )
    tocsin.insert_records(source["id"], [{"Title": "Leak"}], now=NOW)
    tocsin.work(now=LATER)
    (run,) = tocsin.list_runs(source["id"], now=LATER)["items"]
    assert run["status"] == "failed"
    tocsin.register_command("missing", lambda inputs: "now here")
    tocsin.retry_run(source["id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    assert tocsin.list_staged_changes(gated["id"])["total"] == 1


def test_lost_application_is_requeued_by_the_tick_sweep(tocsin: Tocsin) -> None:
    _, gated, change = staged_copy(tocsin)
    tocsin.approve_change(gated["id"], change["id"], now=NOW)
    with tocsin.store.begin() as tx:  # a worker claimed it and died before applying
        claimed = claim_approved_change(tx, now=NOW)
        assert claimed is not None and claimed.id == change["id"]
    assert tocsin.work(now=LATER) == 0
    assert tocsin.list_records(gated["id"])["items"] == []
    assert tocsin.tick(now=STALE)["staged_changes_requeued"] == 1
    tocsin.work(now=STALE)
    assert len(tocsin.list_records(gated["id"])["items"]) == 1
    assert tocsin.list_staged_changes(gated["id"])["items"][0]["status"] == "applied"


def test_failed_application_is_recorded(tocsin: Tocsin) -> None:
    _, gated, change = staged_copy(tocsin)
    tocsin.approve_change(gated["id"], change["id"], now=LATER)
    tocsin.trash_table(gated["id"], now=LATER)
    tocsin.work(now=LATER)
    tocsin.restore_table(gated["id"], now=LATER)
    (failed,) = tocsin.list_staged_changes(gated["id"])["items"]
    assert failed["status"] == "failed" and failed["error"] == messages.TABLE_NOT_FOUND


def test_a_persistent_lock_conflict_hands_the_change_back_without_spinning(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, gated, change = staged_copy(tocsin)
    tocsin.approve_change(gated["id"], change["id"], now=LATER)
    slept = no_wait(tocsin)
    calls: list[int] = []

    def locked(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > 10:  # a spinning worker would end up here
            raise RuntimeError("claimed again and again")
        raise TransientStoreError("database is locked")

    monkeypatch.setattr(store_records, "insert_records", locked)  # the apply's record write
    tocsin.work(now=LATER)
    assert len(calls) == 3 and len(slept) == 2  # SPEC §9.5: three attempts, then hand back
    (back,) = tocsin.list_staged_changes(gated["id"])["items"]
    assert back["status"] == "approved" and back["error"] == "database is locked"
    monkeypatch.undo()
    tocsin.work(now=LATER)
    assert tocsin.list_staged_changes(gated["id"])["items"][0]["status"] == "applied"
    assert len(tocsin.list_records(gated["id"])["items"]) == 1
