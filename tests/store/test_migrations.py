"""Alembic upgrade-head equals ``tables.metadata`` on both backends (DESIGN §5, STYLE R12)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select, text

from tocsin.core.model import Table
from tocsin.core.schedules.identity import definition_digest
from tocsin.core.schedules.skips import SCHEDULE
from tocsin.core.schedules.tree import subscription_keys
from tocsin.engine.schedules import resume_schedule
from tocsin.store import Store, open_store
from tocsin.store import schedules as store_schedules
from tocsin.store.ledger import claim_occurrences, fired_identities
from tocsin.store.migrate import (
    HEAD_REVISION,
    alembic_config,
    current_revision,
    head_revision,
    upgrade_to_head,
)
from tocsin.store.runs import (
    active_clock_trigger_ids,
    claim_scoped_runs,
    get_run,
    insert_run,
)
from tocsin.store.schema import (
    metadata,
    row_snapshots,
    runs,
    skips,
    trigger_definitions,
    trigger_state,
)
from tocsin.store.skips import NO_TABLE, list_skips
from tocsin.store.state import get_state, upsert_state
from tocsin.store.trigger_events import claim_due_trigger_schedules

from .helpers import NOW, PG_ONLY, make_table, new_id

VERSION_TABLE = "alembic_version"


def _include_name(name: str | None, type_: str, _parent: Any) -> bool:
    return not (type_ == "table" and name == VERSION_TABLE)


def test_upgrade_head_matches_metadata(store: Store) -> None:
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_name": _include_name}
        )
        diffs = compare_metadata(context, metadata)
    assert diffs == []


def test_every_table_and_index_exists(store: Store) -> None:
    inspector = inspect(store.engine)
    assert set(inspector.get_table_names()) == set(metadata.tables) | {VERSION_TABLE}
    for table in metadata.tables.values():
        found = {index["name"] for index in inspector.get_indexes(table.name)}
        assert {index.name for index in table.indexes} <= found, table.name


def test_one_active_run_index_is_partial_with_its_predicate(store: Store) -> None:
    indexes = {ix["name"]: ix for ix in inspect(store.engine).get_indexes("runs")}
    index = indexes["uq_runs_one_active_clock"]
    assert index["unique"]
    assert index["column_names"] == ["table_id", "trigger_id"]  # per table (0020)
    where = str(index["dialect_options"][f"{store.engine.dialect.name}_where"])
    assert "clock" in where
    assert "pending" in where and "running" in where


def test_database_is_at_head_and_reopening_is_a_noop(store: Store, store_url: str) -> None:
    assert current_revision(store) == head_revision() == HEAD_REVISION == "0036_oneclaim"
    again = open_store(store_url)
    try:
        assert current_revision(again) == "0036_oneclaim"
    finally:
        again.dispose()


def test_opening_a_database_at_head_does_not_import_alembic(store: Store, store_url: str) -> None:
    """Alembic (about 4 MB in a serving process) loads only when a migration is to run."""
    code = (
        "import sys; from tocsin.store import open_store; "
        f"open_store({store_url!r}).dispose(); print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_downgrade_to_base_and_back(store: Store) -> None:
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "base")
    assert set(inspect(store.engine).get_table_names()) <= {VERSION_TABLE}
    upgrade_to_head(store)
    assert set(inspect(store.engine).get_table_names()) == set(metadata.tables) | {VERSION_TABLE}


@PG_ONLY
def test_trigger_state_pages_keep_room_for_hot_updates(store: Store) -> None:
    """Migration 0002: fillfactor 50 on trigger_state (PostgreSQL), reset by its downgrade."""

    def options() -> list[str]:
        with store.begin() as tx:
            found = tx.conn.execute(
                text("SELECT reloptions FROM pg_class WHERE oid = 'trigger_state'::regclass")
            ).scalar_one()
        return list(found or [])

    assert options() == ["fillfactor=50"]
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0001")
    assert options() == []
    upgrade_to_head(store)
    assert options() == ["fillfactor=50"]


def test_ledger_key_is_table_first_and_its_rows_survive_both_ways(store: Store) -> None:
    """Migration 0003 (SQLite: a rebuilt table) keeps the claims; the fence still refuses a
    second claim of one identity after it."""

    def key() -> list[str]:
        return list(
            inspect(store.engine).get_pk_constraint("occurrence_ledger")["constrained_columns"]
        )

    assert key() == ["table_id", "trigger_id", "identity"]
    with store.begin() as tx:
        assert claim_occurrences(tx, claims=[("t", "trg_a", "w1", "r1")], now=NOW) == {
            ("t", "trg_a", "w1")
        }
        command.downgrade(alembic_config(tx.conn), "0002")
    assert key() == ["trigger_id", "identity"]
    upgrade_to_head(store)
    assert key() == ["table_id", "trigger_id", "identity"]
    with store.begin() as tx:
        assert fired_identities(tx, table_id="t", trigger_id="trg_a", identities=["w1"]) == {"w1"}
        assert claim_occurrences(tx, claims=[("t", "trg_a", "w1", "r2")], now=NOW) == set()


def _clock_run(tx: Any, table_id: str, trigger_id: str) -> Any:
    return insert_run(
        tx, id=new_id(), table_id=table_id, trigger_id=trigger_id, record_id=None,
        source="schedule", clock=True, payload={}, definition=None, identity=new_id(),
        scheduled_for=NOW, now=NOW,
    )  # fmt: skip


def _old_state_row(tx: Any, table_id: str) -> None:
    """The interval trigger ``nightly``'s state row, written as an older revision held it (only
    the columns every revision since 0001 has)."""
    tx.conn.execute(
        trigger_state.insert().values(
            trigger_id="nightly", table_id=table_id, kind="interval", anchor=NOW,
            schedule_hash="h1", next_due_at=NOW, updated_at=NOW,
        )
    )  # fmt: skip


def test_trigger_ids_become_per_table_and_existing_rows_survive(store: Store, table: Table) -> None:
    """Migration 0020 (SQLite: a rebuilt table): trigger_state's key and the one-active-run
    index gain the table; a state row and an active clock run written at 0019 are kept and
    still fence their trigger, and another table may then use the same id."""

    def key() -> list[str]:
        return list(inspect(store.engine).get_pk_constraint("trigger_state")["constrained_columns"])

    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0019")
    assert key() == ["trigger_id"]
    with store.begin() as tx:  # rows as 0019 held them (plain inserts: no per-table conflict key)
        _old_state_row(tx, table.id)
        tx.conn.execute(
            runs.insert().values(
                id="r-old", table_id=table.id, trigger_id="nightly", source="schedule",
                clock=True, status="pending", action_results=[], payload={}, identity="w0",
                created_at=NOW, updated_at=NOW,
            )
        )  # fmt: skip
        for kind, table_id in (("trigger", table.id), ("schedule", None)):
            tx.conn.execute(
                skips.insert().values(
                    target_kind=kind, target_id="nightly", reason="coalesced", first_instant=NOW,
                    last_instant=NOW, count=3, table_id=table_id, updated_at=NOW,
                )
            )  # fmt: skip
    upgrade_to_head(store)
    assert key() == ["table_id", "trigger_id"]
    other = make_table(store)
    with store.begin() as tx:
        kept = get_state(tx, table_id=table.id, trigger_id="nightly")
        assert kept is not None and kept.anchor == NOW and kept.schedule_hash == "h1"
        assert active_clock_trigger_ids(tx, table_id=table.id, trigger_ids=["nightly"]) == {
            "nightly"
        }
        assert _clock_run(tx, table.id, "nightly") is None  # still fenced in its table
        assert active_clock_trigger_ids(tx, table_id=other.id, trigger_ids=["nightly"]) == set()
        made = upsert_state(
            tx, trigger_id="nightly", table_id=other.id, kind="daily", anchor=None,
            schedule_hash="h2", now=NOW, next_due_at=None,
        )  # fmt: skip
        assert made.table_id == other.id and made.kind == "daily"
        assert _clock_run(tx, other.id, "nightly") is not None  # its own fence
        assert get_state(tx, table_id=table.id, trigger_id="nightly") == kept
        for kind, table_id in (("trigger", table.id), ("schedule", NO_TABLE)):
            rows, total = list_skips(tx, target_kind=kind, table_id=table_id, target_id="nightly")
            assert total == 1 and rows[0].count == 3
        assert list_skips(tx, target_kind="trigger", table_id=other.id, target_id="nightly")[1] == 0


def test_redundant_trigger_state_index_is_dropped_and_restored(store: Store) -> None:
    """Migration 0021: the primary key (table_id, trigger_id) serves lookups by table, so the
    index on table_id alone goes; the downgrade puts it back."""

    def names() -> set[str]:
        return {str(ix["name"]) for ix in inspect(store.engine).get_indexes("trigger_state")}

    assert "ix_trigger_state_table" not in names()
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0020")
    assert "ix_trigger_state_table" in names()
    upgrade_to_head(store)
    assert "ix_trigger_state_table" not in names()


def test_stored_configs_get_their_definitions_and_runs_keep_theirs_both_ways(
    store: Store, table: Table
) -> None:
    """Migration 0025: each schedule trigger of a stored config gets its ``trigger_definitions``
    row and its state row's hash; a run holding a copy keeps it; the downgrade gives a run that
    names its definition by hash the copy back."""
    nightly = {
        "id": "nightly",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 60},
        "actions": [{"id": "a1", "type": "notify", "message": "x"}],
    }
    row_event = {"id": "on_new", "on": "created", "actions": []}
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0022")
    with store.begin() as tx:  # rows as 0022 held them
        tx.conn.execute(
            text("UPDATE tables SET triggers = :c WHERE id = :i"),
            {"c": json.dumps([row_event, nightly]), "i": table.id},
        )
        _old_state_row(tx, table.id)
        tx.conn.execute(
            text(
                "INSERT INTO runs (id, table_id, trigger_id, source, clock, status, attempts,"
                " action_results, payload, definition, created_at, updated_at) VALUES ('r-old',"
                " :t, 'nightly', 'schedule', false, 'done', 1, '[]', '{}', :d, :n, :n)"
            ),
            {"t": table.id, "d": json.dumps(nightly), "n": NOW.replace(tzinfo=None)},
        )
    upgrade_to_head(store)
    with store.begin() as tx:
        kept = get_state(tx, table_id=table.id, trigger_id="nightly")
        assert kept is not None and kept.definition_hash == definition_digest(nightly)
        stored = tx.conn.execute(select(trigger_definitions.c.definition)).scalars().all()
        assert stored == [nightly]  # the schedule trigger only
        old = get_run(tx, run_id="r-old")
        assert old is not None and old.definition == nightly
        insert_run(
            tx, now=NOW, id="r-new", table_id=table.id, trigger_id="nightly", record_id=None,
            source="schedule", clock=False, payload={}, definition=None, identity=None,
            scheduled_for=NOW, definition_hash=kept.definition_hash,
        )  # fmt: skip
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0022")
    with store.begin() as tx:
        copied = tx.conn.execute(text("SELECT definition FROM runs WHERE id = 'r-new'")).scalar()
        assert (json.loads(copied) if isinstance(copied, str) else copied) == nightly
    upgrade_to_head(store)


def _stored_payloads(tx: Any) -> dict[str, Any]:
    """Each run's own ``runs.payload`` column, decoded (whatever a revision reads it as)."""
    rows = tx.conn.execute(text("SELECT id, payload FROM runs")).all()
    return {i: json.loads(p) if isinstance(p, str) else p for i, p in rows}


def test_stored_runs_move_their_rows_into_one_snapshot_per_write_both_ways(
    store: Store, table: Table
) -> None:
    """Migration 0028: the runs one write created from one row (one record, instant, event
    and row) name one ``row_snapshots`` row and drop their copies; a run without a record
    keeps its payload; every run reads the row it had; the downgrade copies the rows back."""
    later = NOW.replace(minute=30)
    open_row, done_row = ({"id": "rec1", "data": {"Status": s}} for s in ("Open", "Done"))
    plan = [  # (run id, record, source, created_at, payload)
        *((f"w1-{n}", "rec1", "created", NOW, open_row) for n in range(3)),  # one write
        *((f"w2-{n}", "rec1", "updated", NOW, done_row) for n in range(2)),  # its update
        ("w3-0", "rec1", "updated", NOW, open_row),  # another update at the same instant
        ("w4-0", "rec1", "updated", later, done_row),  # the same row, written later
        ("t1-0", "rec2", "schedule", NOW, {"id": "rec2", "data": {}}),  # a tick's date run
        ("c1-0", None, "schedule", NOW, {}),  # a clock run
        ("odd-0", None, "schedule", NOW, {"n": 1}),  # recordless, with a payload: kept
    ]
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0027")
    with store.begin() as tx:  # runs as 0027 held them: each with its copy
        for run_id, record_id, source, created_at, payload in plan:
            tx.conn.execute(
                text(
                    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock,"
                    " status, attempts, action_results, payload, created_at, updated_at)"
                    " VALUES (:i, :t, :g, :r, :s, false, 'done', 1, '[]', :p, :c, :c)"
                ),
                {
                    "i": run_id, "t": table.id, "g": f"trg_{run_id}", "r": record_id,
                    "s": source, "p": json.dumps(payload), "c": created_at.replace(tzinfo=None),
                },
            )  # fmt: skip
    upgrade_to_head(store)
    expected = {run_id: payload for run_id, _, _, _, payload in plan}
    with store.read() as tx:
        for run_id, payload in expected.items():
            run = get_run(tx, run_id=run_id)
            assert run is not None and run.payload == payload, run_id
        snapshots = tx.conn.execute(select(row_snapshots.c.id)).scalars().all()
        assert sorted(snapshots) == ["t1-0", "w1-0", "w2-0", "w3-0", "w4-0"]
        named = {i: s for i, s in tx.conn.execute(select(runs.c.id, runs.c.snapshot_id))}
        assert named == {
            **{f"w1-{n}": "w1-0" for n in range(3)}, **{f"w2-{n}": "w2-0" for n in range(2)},
            "w3-0": "w3-0", "w4-0": "w4-0", "t1-0": "t1-0", "c1-0": None, "odd-0": None,
        }  # fmt: skip
        own = _stored_payloads(tx)
        assert own == {**{i: {} for i in expected}, "odd-0": {"n": 1}}
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0027")
    with store.read() as tx:
        assert _stored_payloads(tx) == expected
    upgrade_to_head(store)


def test_stored_runs_get_their_tables_scope_both_ways(store: Store, table: Table) -> None:
    """Migration 0029_fair: every stored run takes its table's ``scope:scope_id`` (a run whose
    table is gone: ''), pending ones then claimed by scope; the downgrade drops the column."""
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0028_e")
    with store.begin() as tx:  # runs as 0028_e held them: no scope
        for run_id, table_id in (("mine", table.id), ("gone", new_id())):
            tx.conn.execute(
                text(
                    "INSERT INTO runs (id, table_id, trigger_id, source, clock, status, attempts,"
                    " action_results, payload, created_at, updated_at)"
                    " VALUES (:i, :t, 'trg', 'created', false, 'pending', 0, '[]', '{}', :c, :c)"
                ),
                {"i": run_id, "t": table_id, "c": NOW.replace(tzinfo=None)},
            )
    upgrade_to_head(store)
    with store.read() as tx:
        scopes = dict(tx.conn.execute(select(runs.c.id, runs.c.scope)).all())
    assert scopes == {"mine": f"{table.scope}:{table.scope_id}", "gone": ""}
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=NOW, limit=5)
    assert sorted(run.id for run in claimed) == ["gone", "mine"]
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0028_e")
    upgrade_to_head(store)


def test_lane_attempts_move_into_the_one_queue_both_ways(store: Store, table: Table) -> None:
    """Migration 0030_queue: every stored lane attempt gets its row in ``runs`` (kind ``lane``,
    its state as status, its lane, its run's instant), a pending one then claimed by the one
    claim; a table run stays ``actions``; the downgrade moves the state back."""
    made, due = NOW.replace(tzinfo=None), NOW.replace(minute=0, tzinfo=None)
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0029_fire")
    with store.begin() as tx:  # as 0029_fire held them: the state on the attempt
        tx.conn.execute(
            text(
                "INSERT INTO lane_runs (run_id, lane_id, zone, scheduled_for, window_start,"
                " window_end, policy_version, admitted, attempts, state, created_at, updated_at)"
                " VALUES ('run_1', 'intake', 'UTC', :d, :d, :d, 'v1', true, 2, 'pending', :m, :m)"
            ),
            {"d": due, "m": made},
        )
        for attempt, state in ((1, "recorded"), (2, "pending")):
            tx.conn.execute(
                text(
                    "INSERT INTO lane_attempts (attempt_id, run_id, lane_id, attempt, kind,"
                    " observed_at, state, created_at, updated_at) VALUES"
                    " (:a, 'run_1', 'intake', :n, 'scheduled', :m, :s, :m, :m)"
                ),
                {"a": f"attempt_{attempt:032d}", "n": attempt, "m": made, "s": state},
            )
        tx.conn.execute(
            text(
                "INSERT INTO runs (id, table_id, trigger_id, source, clock, status, attempts,"
                " action_results, payload, created_at, updated_at, scope) VALUES"
                " ('table-run', :t, 'trg', 'created', false, 'done', 1, '[]', '{}', :m, :m, '')"
            ),
            {"t": table.id, "m": made},
        )
    upgrade_to_head(store)
    with store.read() as tx:
        rows = tx.conn.execute(
            select(
                runs.c.id, runs.c.kind, runs.c.status, runs.c.trigger_id, runs.c.scheduled_for
            ).order_by(runs.c.id)
        ).all()
    assert [tuple(r) for r in rows] == [
        ("attempt_" + "0" * 31 + "1", "lane", "recorded", "intake", NOW.replace(minute=0)),
        ("attempt_" + "0" * 31 + "2", "lane", "pending", "intake", NOW.replace(minute=0)),
        ("table-run", "actions", "done", "trg", None),
    ]
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=NOW, limit=5, own=["intake"])
    assert [(run.id, run.kind, run.scope) for run in claimed] == [
        ("attempt_" + "0" * 31 + "2", "lane", "app")
    ]
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0029_fire")
    with store.read() as tx:
        states = tx.conn.execute(
            text("SELECT attempt_id, state FROM lane_attempts ORDER BY attempt_id")
        ).all()
        left = tx.conn.execute(text("SELECT id FROM runs")).scalars().all()
    assert [tuple(s) for s in states] == [
        ("attempt_" + "0" * 31 + "1", "recorded"),
        ("attempt_" + "0" * 31 + "2", "running"),
    ]
    assert left == ["table-run"]
    upgrade_to_head(store)


HOURLY_TREE = {
    "any": [
        {"cron": "0 * * * *", "timezone": "UTC"},
        {"event": "workflow_succeeded", "workflow_id": "wf"},
    ]
}


def _schedules_at_0032(store: Store) -> dict[str, datetime]:
    """Four workflow schedules as 0032_treedue held them (``paused`` a boolean), all owing the
    hourly instants from 01:00: a cron and a tree one paused, a cron and a tree one running.
    Returns each one's ``updated_at``."""
    day = NOW.replace(hour=0, minute=0, second=0, tzinfo=None)
    updated = {
        "sch_cron_paused": day + timedelta(minutes=30),
        "sch_cron_running": day + timedelta(minutes=10),
        "sch_tree_paused": day + timedelta(minutes=40),
        "sch_tree_running": day + timedelta(minutes=20),
    }
    tree = "CAST(:tree AS JSON)" if store.is_postgres else ":tree"
    with store.begin() as tx:
        for sid, at in updated.items():
            is_tree = "tree" in sid
            tx.conn.execute(
                text(
                    "INSERT INTO workflow_schedules (id, workflow_id, source, cron, timezone,"
                    " overlap, catch_up, max_catch_up, paused, next_fire_at, created_at,"
                    " updated_at, trigger_tree, evaluated_at, trigger_keys) VALUES (:id, 'wf',"
                    " 'imperative', '0 * * * *', 'UTC', 'skip', 'latest', 100, :paused, :next,"
                    f" :made, :at, {tree if is_tree else 'NULL'}, :made, :keys)"
                ),
                {
                    "id": sid,
                    "paused": "paused" in sid,
                    "next": day + timedelta(hours=1),
                    "made": day,
                    "at": at,
                    "tree": json.dumps(HOURLY_TREE),
                    "keys": subscription_keys(HOURLY_TREE) if is_tree else None,
                },
            )
    return {sid: at.replace(tzinfo=UTC) for sid, at in updated.items()}


def test_paused_schedules_keep_their_pause_as_an_instant_both_ways(store: Store) -> None:
    """Migration 0033_pauseat: a schedule paused at 0032_treedue is paused since its
    ``updated_at``, a running one has no ``paused_at``; neither due claim takes a paused one; the
    downgrade gives ``paused`` back; a resume still records the instants the pause owed as
    ``paused`` skips and fires from the next instant after it."""
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0032_treedue")
    updated = _schedules_at_0032(store)
    first = NOW.replace(hour=1, minute=0, second=0)
    for _ in range(2):  # upgrade, then down and up again: the same
        upgrade_to_head(store)
        with store.read() as tx:
            rows = {sid: store_schedules.get_schedule(tx, schedule_id=sid) for sid in updated}
        for sid, row in rows.items():
            assert row is not None
            want = updated[sid] if "paused" in sid else None
            assert (row.paused_at, row.paused, row.next_fire_at) == (want, want is not None, first)
        with store.begin() as tx:
            due = store_schedules.claim_due_schedules(tx, now=NOW, limit=10)
            trees = claim_due_trigger_schedules(tx, now=NOW, limit=10)
        assert [r.id for r in due] == ["sch_cron_running"]
        assert [r.id for r in trees] == ["sch_tree_running"]
        with store.begin() as tx:
            command.downgrade(alembic_config(tx.conn), "0032_treedue")
        with store.read() as tx:
            flags = tx.conn.execute(text("SELECT id, paused FROM workflow_schedules ORDER BY id"))
            assert {sid: bool(p) for sid, p in flags} == {s: "paused" in s for s in updated}
    upgrade_to_head(store)
    with store.begin() as tx:
        for sid in ("sch_cron_paused", "sch_tree_paused"):
            row = store_schedules.get_schedule(tx, schedule_id=sid, for_update=True)
            assert row is not None
            resume_schedule(tx, row, NOW)
    with store.read() as tx:
        for sid in ("sch_cron_paused", "sch_tree_paused"):
            row = store_schedules.get_schedule(tx, schedule_id=sid)
            assert row is not None and row.paused_at is None
            assert row.next_fire_at == NOW.replace(hour=6, minute=0, second=0)
            ranges, _ = list_skips(tx, target_kind=SCHEDULE, target_id=sid)
            assert [(r.reason, r.first, r.last, r.count) for r in ranges] == [
                ("paused", first, NOW.replace(hour=5, minute=0, second=0), 5)
            ], sid
    with store.begin() as tx:
        later = NOW.replace(hour=6, minute=0, second=0)
        due = store_schedules.claim_due_schedules(tx, now=later, limit=10)
        trees = claim_due_trigger_schedules(tx, now=later, limit=10)
    assert [r.id for r in due] == ["sch_cron_running", "sch_cron_paused"]  # next_fire_at, id
    assert [r.id for r in trees] == ["sch_tree_running", "sch_tree_paused"]
