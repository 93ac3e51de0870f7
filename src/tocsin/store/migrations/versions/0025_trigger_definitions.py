"""Schedule runs name their frozen definition by hash instead of carrying a copy.

- ``trigger_definitions (hash, definition)``: each distinct stored trigger definition once,
  content-addressed (``core.identity.definition_digest``), written when a config is saved.
- ``trigger_state.definition_hash``: the trigger's current definition. The tick copies this
  32-character hash into each run it creates (it used to copy the trigger's JSON out of the
  table's config, per run).
- ``runs.definition_hash``: the definition a schedule or manual run executes. ``runs.definition``
  keeps the copies of earlier runs and of row-event runs; readers take whichever is set.

The existing configs are hashed here: every schedule trigger of every table gets its
definition row and its state row's hash, so the next tick freezes by reference at once.

Revision ID: 0025
Revises: 0022
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from alembic import op

from tocsin.core.schedules.identity import definition_digest

revision = "0025"
down_revision: str | None = "0022"
branch_labels: str | None = None
depends_on: str | None = None

BATCH = 500


def upgrade() -> None:
    definitions = op.create_table(
        "trigger_definitions",
        sa.Column("hash", sa.String(length=32), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("hash"),
    )
    with op.batch_alter_table("trigger_state") as batch:
        batch.add_column(sa.Column("definition_hash", sa.String(length=32), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("definition_hash", sa.String(length=32), nullable=True))
    _hash_stored_configs(definitions)


def _hash_stored_configs(definitions: sa.Table) -> None:
    conn = op.get_bind()
    tables = sa.table("tables", sa.column("id", sa.String), sa.column("triggers", sa.JSON))
    state = sa.table(
        "trigger_state",
        sa.column("table_id", sa.String),
        sa.column("trigger_id", sa.String),
        sa.column("definition_hash", sa.String),
    )
    set_hash = (
        sa.update(state)
        .where(state.c.table_id == sa.bindparam("tab"), state.c.trigger_id == sa.bindparam("tid"))
        .values(definition_hash=sa.bindparam("h"))
    )
    seen: set[str] = set()
    new: list[dict[str, object]] = []
    keys: list[dict[str, object]] = []
    stored = sa.select(tables.c.id, tables.c.triggers).where(tables.c.triggers.is_not(None))
    for table_id, config in conn.execute(stored).all():
        for trigger in config if isinstance(config, list) else []:
            if not (isinstance(trigger, Mapping) and trigger.get("on") == "schedule"):
                continue
            if not isinstance(trigger.get("id"), str):
                continue
            digest = definition_digest(trigger)
            if digest not in seen:
                seen.add(digest)
                new.append({"hash": digest, "definition": trigger})
            keys.append({"tab": table_id, "tid": trigger["id"], "h": digest})
    for start in range(0, len(new), BATCH):
        conn.execute(sa.insert(definitions), new[start : start + BATCH])
    for start in range(0, len(keys), BATCH):
        conn.execute(set_hash, keys[start : start + BATCH])


def downgrade() -> None:
    # the runs that name their definition get their copy back before the hashes go
    op.execute(
        "UPDATE runs SET definition = (SELECT d.definition FROM trigger_definitions AS d"
        " WHERE d.hash = runs.definition_hash)"
        " WHERE runs.definition IS NULL AND runs.definition_hash IS NOT NULL"
    )
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("definition_hash")
    with op.batch_alter_table("trigger_state") as batch:
        batch.drop_column("definition_hash")
    op.drop_table("trigger_definitions")
