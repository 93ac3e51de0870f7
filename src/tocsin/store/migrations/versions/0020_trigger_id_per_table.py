"""A trigger id is unique within its table only (SPEC §5.1: a state row per trigger id, per table).

Trigger ids were global: a table saving an id another table used was refused, which let one
tenant squat an id and told it the id existed elsewhere. Now:

- ``trigger_state``'s key becomes ``(table_id, trigger_id)``;
- ``uq_runs_one_active_clock`` (one active clock run per trigger) becomes
  ``(table_id, trigger_id)`` with the same predicate;
- the skip ledger's target gains the table: ``skips.table_id`` is required (``''`` for a
  workflow schedule's rows, which had NULL) and joins its key and ``ix_skips_last``.

Existing rows are kept (every id had one table, so the new keys are unique). SQLite cannot change
a primary key in place: the table is rebuilt (batch mode), rows kept; PostgreSQL drops and adds
the constraint (``fillfactor`` stays). The downgrade fails if two tables share an id by then.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision: str | None = "0019"
branch_labels: str | None = None
depends_on: str | None = None

PK = "pk_trigger_state"
ACTIVE = "uq_runs_one_active_clock"
WHERE = "clock AND status IN ('pending', 'running')"


SKIPS_PK = "pk_skips"
SKIPS_LAST = "ix_skips_last"


def _key(columns: list[str]) -> None:
    with op.batch_alter_table("trigger_state", recreate="auto") as batch:
        batch.drop_constraint(PK, type_="primary")
        batch.create_primary_key(PK, columns)
    op.drop_index(ACTIVE, table_name="runs")
    op.create_index(
        ACTIVE,
        "runs",
        columns,
        unique=True,
        postgresql_where=sa.text(WHERE),
        sqlite_where=sa.text(WHERE),
    )


def _skips_key(per_table: bool) -> None:
    table = ["table_id"] if per_table else []
    op.drop_index(SKIPS_LAST, table_name="skips")
    if per_table:
        op.execute("UPDATE skips SET table_id = '' WHERE table_id IS NULL")
    with op.batch_alter_table("skips", recreate="auto") as batch:
        batch.drop_constraint(SKIPS_PK, type_="primary")
        batch.alter_column(
            "table_id",
            existing_type=sa.String(36),
            nullable=not per_table,
            server_default=sa.text("''") if per_table else None,
        )
        batch.create_primary_key(
            SKIPS_PK, ["target_kind", *table, "target_id", "reason", "first_instant"]
        )
    if not per_table:
        op.execute("UPDATE skips SET table_id = NULL WHERE table_id = ''")
    op.create_index(
        SKIPS_LAST, "skips", ["target_kind", *table, "target_id", "reason", "last_instant"]
    )


def upgrade() -> None:
    _key(["table_id", "trigger_id"])
    _skips_key(per_table=True)


def downgrade() -> None:
    _skips_key(per_table=False)
    _key(["trigger_id"])
