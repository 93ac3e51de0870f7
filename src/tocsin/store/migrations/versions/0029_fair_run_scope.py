"""A run carries its scope: the fair claim takes the scopes in turn from an index.

- ``runs.scope``: its table's ``scope:scope_id`` when the run was created ('' when the table is
  gone). Backfilled from ``tables`` for the runs already stored.
- ``ix_runs_pending_scope (scope, updated_at, id) WHERE status = 'pending'``: the scopes that
  have pending runs (one index probe each) and each scope's oldest pending runs, in order,
  without reading or sorting every pending run.

Revision ID: 0029_fair
Revises: 0028_e
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_fair"
down_revision: str | None = "0028_e"
branch_labels: str | None = None
depends_on: str | None = None

_PENDING = "status = 'pending'"
# compared byte by byte on PostgreSQL too (the claim's visiting order, as SQLite and Python)
_KEY = sa.String(length=64).with_variant(sa.String(length=64, collation="C"), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("scope", _KEY, server_default=sa.text("''"), nullable=False))
    op.execute(
        "UPDATE runs SET scope = (SELECT t.scope || ':' || t.scope_id FROM tables AS t"
        " WHERE t.id = runs.table_id) WHERE EXISTS (SELECT 1 FROM tables AS t"
        " WHERE t.id = runs.table_id)"
    )
    op.create_index(
        "ix_runs_pending_scope",
        "runs",
        ["scope", "updated_at", "id"],
        unique=False,
        postgresql_where=sa.text(_PENDING),
        sqlite_where=sa.text(_PENDING),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_pending_scope", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("scope")
