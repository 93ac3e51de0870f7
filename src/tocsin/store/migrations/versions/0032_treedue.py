"""The trigger-tree schedules' due claim seeks its due rows, in its order, and stops at its page.

``ix_workflow_schedules_tree_due (paused, next_fire_at, id) WHERE trigger_tree IS NOT NULL``:
the tree pass claims ``paused = false AND next_fire_at <= now ORDER BY next_fire_at, id LIMIT
1000`` (the cron claim's order) every tick; it had only ``ix_workflow_schedules_trees (id)``, so
it read every tree schedule and sorted the due ones. Measured 2026-12-04 on this machine under
load (20,000 tree schedules of which 5 due, 20,000 plain cron schedules, a claim of 1,000):

- PostgreSQL 15: ``Index Scan using ix_workflow_schedules_trees … Rows Removed by Filter: 19995``
  then ``Sort``, 27 ms (the generic plan 28 ms), claims ~18 ms; with the index ``Index Scan using
  ix_workflow_schedules_tree_due  Index Cond: ((paused = false) AND … (next_fire_at <= …))``, no
  Sort, 0.05 ms, claims ~0.6-0.8 ms;
- SQLite: ``SCAN … USING INDEX ix_workflow_schedules_trees`` + ``USE TEMP B-TREE FOR ORDER BY``,
  ~58 ms; with the index ``SEARCH … USING INDEX ix_workflow_schedules_tree_due (paused=? AND
  next_fire_at>? AND next_fire_at<?)``, 0.13 ms.

Revision ID: 0032_treedue
Revises: 0031_idle
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032_treedue"
down_revision: str | None = "0031_idle"
branch_labels: str | None = None
depends_on: str | None = None

HAS_TREE = sa.text("trigger_tree IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_workflow_schedules_tree_due",
        "workflow_schedules",
        ["paused", "next_fire_at", "id"],
        unique=False,
        postgresql_where=HAS_TREE,
        sqlite_where=HAS_TREE,
    )


def downgrade() -> None:
    op.drop_index("ix_workflow_schedules_tree_due", table_name="workflow_schedules")
