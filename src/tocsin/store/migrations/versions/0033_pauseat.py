"""A workflow schedule's pause has the shape of a table trigger's and a lane's: an instant.

``workflow_schedules.paused_at`` (NULL: running) replaces ``paused`` (boolean). A row paused
before this migration never recorded when it was paused; it gets ``paused_at = updated_at``, the
best instant known: ``updated_at`` is the row's last write, the pause's own unless something
wrote the row since (an edit, a sync, an IaC apply: then a later instant, at which the schedule
was paused already). A running row gets NULL.

The due claims test ``paused_at IS NULL`` and keep seeking their page in their order: both due
indexes become partial over the running rows, ``(next_fire_at, id)``:

- ``ix_workflow_schedules_due`` ``WHERE trigger_tree IS NULL AND paused_at IS NULL`` (the cron
  claim; it was ``(paused, next_fire_at, id) WHERE trigger_tree IS NULL``);
- ``ix_workflow_schedules_tree_due`` ``WHERE trigger_tree IS NOT NULL AND paused_at IS NULL``
  (the tree pass's claim; it was ``(paused, next_fire_at, id) WHERE trigger_tree IS NOT NULL``).

A paused schedule is in neither. Measured 2026-12-04 on this machine (20,000 plain cron and
20,000 tree schedules, of each 5 due and 100 paused with a due ``next_fire_at``; the claims'
``… WHERE <running> AND next_fire_at IS NOT NULL AND next_fire_at <= now [AND trigger_tree IS
NULL] ORDER BY next_fire_at, id LIMIT 1000``, PostgreSQL under ``keyed_access_only``; SQLite:
the statement's median of 50, client side; PostgreSQL: EXPLAIN ANALYZE's execution time):

- SQLite 3.40, before: ``SEARCH workflow_schedules USING INDEX ix_workflow_schedules_due
  (paused=? AND next_fire_at>? AND next_fire_at<?)`` (``ix_workflow_schedules_tree_due`` the
  same), 0.04 ms each; after: ``SEARCH … USING INDEX ix_workflow_schedules_due (next_fire_at>?
  AND next_fire_at<?)`` (``_tree_due`` the same), 0.04 ms each; no temporary B-tree either way;
- PostgreSQL 15, before: ``Index Only Scan using ix_workflow_schedules_due … Index Cond:
  ((paused = false) AND (next_fire_at IS NOT NULL) AND (next_fire_at <= …))``, Heap Fetches 5,
  0.05 ms (``_tree_due``: the same, 0.03 ms); after: ``Index Only Scan using
  ix_workflow_schedules_due … Index Cond: ((next_fire_at IS NOT NULL) AND (next_fire_at <=
  …))``, no Sort (``_tree_due`` the same), 0.03-0.04 ms, 0.02 ms once vacuumed (right after the
  upgrade the index still holds the paused rows' versions the ``UPDATE`` replaced: 105 heap
  fetches, each found dead, until the next vacuum).

Revision ID: 0033_pauseat
Revises: 0032_treedue
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_pauseat"
down_revision: str | None = "0032_treedue"
branch_labels: str | None = None
depends_on: str | None = None

DUE = "ix_workflow_schedules_due"
TREE_DUE = "ix_workflow_schedules_tree_due"
NO_TREE = "trigger_tree IS NULL"
HAS_TREE = "trigger_tree IS NOT NULL"
RUNNING = "paused_at IS NULL"


def _partial(name: str, columns: list[str], where: str) -> None:
    op.create_index(
        name,
        "workflow_schedules",
        columns,
        unique=False,
        postgresql_where=sa.text(where),
        sqlite_where=sa.text(where),
    )


def upgrade() -> None:
    op.drop_index(DUE, table_name="workflow_schedules")
    op.drop_index(TREE_DUE, table_name="workflow_schedules")
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.add_column(sa.Column("paused_at", sa.DateTime(), nullable=True))
    op.execute("UPDATE workflow_schedules SET paused_at = updated_at WHERE paused")
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.drop_column("paused")
    _partial(DUE, ["next_fire_at", "id"], f"{NO_TREE} AND {RUNNING}")
    _partial(TREE_DUE, ["next_fire_at", "id"], f"{HAS_TREE} AND {RUNNING}")


def downgrade() -> None:
    op.drop_index(DUE, table_name="workflow_schedules")
    op.drop_index(TREE_DUE, table_name="workflow_schedules")
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.add_column(
            sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.text("false"))
        )
    op.execute("UPDATE workflow_schedules SET paused = true WHERE paused_at IS NOT NULL")
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.drop_column("paused_at")
    _partial(DUE, ["paused", "next_fire_at", "id"], NO_TREE)
    _partial(TREE_DUE, ["paused", "next_fire_at", "id"], HAS_TREE)
