"""A run carries its scope: the fair claim takes the scopes in turn from an index.

- ``runs.scope``: its table's ``scope:scope_id`` when the run was created ('' when the table is
  gone). Backfilled from ``tables`` for the runs already stored.
- ``runs.max_concurrent``: a row-event trigger's limit, copied into its runs (whose scope is then
  ``scope:scope_id/table_id/trigger_id``); ``ix_runs_running_limited (scope) WHERE status =
  'running' AND max_concurrent IS NOT NULL`` counts the running ones.
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
_KEY = sa.String(length=200).with_variant(sa.String(length=200, collation="C"), "postgresql")
_RUNNING_LIMITED = "status = 'running' AND max_concurrent IS NOT NULL"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("scope", _KEY, server_default=sa.text("''"), nullable=False))
        batch.add_column(sa.Column("max_concurrent", sa.Integer(), nullable=True))
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
    op.create_index(
        "ix_runs_running_limited",
        "runs",
        ["scope"],
        unique=False,
        postgresql_where=sa.text(_RUNNING_LIMITED),
        sqlite_where=sa.text(_RUNNING_LIMITED),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_running_limited", table_name="runs")
    op.drop_index("ix_runs_pending_scope", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("max_concurrent")
        batch.drop_column("scope")
