"""A trigger id is unique within its table only (SPEC §5.1: a state row per trigger id, per table).

Trigger ids were global: a table saving an id another table used was refused, which let one
tenant squat an id and told it the id existed elsewhere. Now:

- ``trigger_state``'s key becomes ``(table_id, trigger_id)``;
- ``uq_runs_one_active_clock`` (one active clock run per trigger) becomes
  ``(table_id, trigger_id)`` with the same predicate.

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


def upgrade() -> None:
    _key(["table_id", "trigger_id"])


def downgrade() -> None:
    _key(["trigger_id"])
