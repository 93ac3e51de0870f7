"""SPEC §8, §9: a pass's claimed runs whose actions all write to tocsin's own database (``notify``)
are executed together, in one transaction; a run that fails, or one with another kind of action,
runs on its own, and sees what the runs claimed before it wrote."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tocsin import messages
from tocsin.service import Tocsin

from .helpers import LATER, NOW, make_run, make_table, new_id, read_run, trigger


def feed_texts(t: Tocsin, chatroom_id: str) -> list[str]:
    page = t.messages(chatroom_id, limit=100)
    return [str(m["text"]) for m in reversed(page["items"])]  # oldest first


def test_a_failing_notify_fails_its_run_alone_and_the_others_are_done(tocsin: Tocsin) -> None:
    good = trigger({"type": "notify", "message": "run $run.id"})
    foreign = new_id()  # a stored config that predates the own-chatroom rule
    bad = trigger({"type": "notify", "message": "x", "chatroom_id": foreign})
    table = make_table(tocsin, good, bad)
    runs = [make_run(tocsin, table, good) for _ in range(3)]
    failing = make_run(tocsin, table, bad)
    runs += [make_run(tocsin, table, good) for _ in range(2)]

    assert tocsin.work(now=LATER) == 6

    for run in runs:
        back = read_run(tocsin, run["id"])
        assert back["status"] == "done", back
        [receipt] = back["action_results"]
        assert receipt["ok"] is True and receipt["action_id"] == "act_1"
        assert receipt["started_at"] <= receipt["ended_at"]
    failed = read_run(tocsin, failing["id"])
    assert failed["status"] == "failed"
    assert failed["error"] == messages.notify_other_chatroom(foreign)
    assert [r["ok"] for r in failed["action_results"]] == [False]
    assert sorted(feed_texts(tocsin, table["scope_id"])) == sorted(f"run {r['id']}" for r in runs)


def test_a_run_with_another_action_sees_the_messages_of_the_runs_before_it(
    tocsin: Tocsin,
) -> None:
    seen: list[list[str]] = []
    table: dict[str, Any] = {}

    def look(inputs: dict[str, Any]) -> str:
        seen.append(feed_texts(tocsin, table["scope_id"]))
        return "looked"

    tocsin.register_command("look", look)
    posts = trigger({"type": "notify", "message": "posted"})
    looks = trigger({"type": "invoke_command", "command": "look"})
    table.update(make_table(tocsin, posts, looks))
    first = [make_run(tocsin, table, posts, now=NOW + timedelta(seconds=i)) for i in range(2)]
    middle = make_run(tocsin, table, looks, now=NOW + timedelta(seconds=2))
    last = make_run(tocsin, table, posts, now=NOW + timedelta(seconds=3))

    assert tocsin.work(now=LATER) == 4

    assert seen == [["posted", "posted"]]  # committed before the command ran
    assert feed_texts(tocsin, table["scope_id"]) == ["posted"] * 3
    for run in [*first, middle, last]:
        assert read_run(tocsin, run["id"])["status"] == "done"


def test_a_resumed_run_executes_only_its_unfinished_actions_with_the_batch(
    tocsin: Tocsin,
) -> None:
    trg = trigger(
        {"type": "notify", "message": "one"},
        {"type": "notify", "message": "two"},
        {"type": "notify", "message": "three"},
    )
    table = make_table(tocsin, trg)
    resumed = make_run(tocsin, table, trg)
    done_before = {"action_id": "act_1", "type": "notify", "ok": True, "detail": "earlier"}
    with tocsin.store.begin() as tx:  # an earlier attempt's receipt (a crash after its commit)
        tx.conn.exec_driver_sql(
            "UPDATE runs SET action_results = ? WHERE id = ?"
            if not tx.is_postgres
            else "UPDATE runs SET action_results = CAST(%s AS json) WHERE id = %s",
            (
                '[{"action_id": "act_1", "type": "notify", "ok": true, "detail": "earlier"}]',
                resumed["id"],
            ),
        )
    fresh = make_run(tocsin, table, trg)

    assert tocsin.work(now=LATER) == 2

    back = read_run(tocsin, resumed["id"])
    assert back["status"] == "done"
    assert back["action_results"][0] == done_before
    assert [r["action_id"] for r in back["action_results"]] == ["act_1", "act_2", "act_3"]
    assert read_run(tocsin, fresh["id"])["status"] == "done"
    texts = feed_texts(tocsin, table["scope_id"])
    assert sorted(texts) == sorted(["two", "three", "one", "two", "three"])
    assert isinstance(datetime.fromisoformat(back["action_results"][1]["ended_at"]), datetime)
