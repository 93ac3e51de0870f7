"""The workflow-schedule path writes and sorts less (bench/workflow_bench.py).

- ``ix_workflow_schedules_due`` becomes ``(paused, next_fire_at, id)`` over the cron schedules
  (``trigger_tree IS NULL``, the cron claim's own test): the claim's ``ORDER BY next_fire_at, id``
  is then the index order, so a tick reads its page of due schedules and stops (SQLite built a
  temporary B-tree of every due row per tick for the ``id`` part).
- ``ix_workflow_schedules_trees``, partial (``trigger_tree IS NOT NULL``) on ``id``: the compound
  pass's due claim (every tick, in id order) reads the schedules with a trigger tree only. Both
  planners took the due index for it while the plain schedules were in it, and walked every due
  plain schedule per tick.
- ``ix_workflow_runs_schedule`` keeps ``(schedule_id, status)`` over the active runs only
  (``status IN ('pending', 'running')``, the overlap fence's own test): a run that finishes
  leaves the index instead of being written into it again, and the fence reads active runs only,
  however long the history. (With ``schedule_id`` alone, SQLite's planner preferred the status
  index: every active run read per tick.)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision: str | None = "0021"
branch_labels: str | None = None
depends_on: str | None = None

DUE = "ix_workflow_schedules_due"
TREES = "ix_workflow_schedules_trees"
FENCE = "ix_workflow_runs_schedule"
ACTIVE = sa.text("status IN ('pending', 'running')")
HAS_TREE = sa.text("trigger_tree IS NOT NULL")
NO_TREE = sa.text("trigger_tree IS NULL")


def upgrade() -> None:
    op.drop_index(DUE, table_name="workflow_schedules")
    op.create_index(
        DUE,
        "workflow_schedules",
        ["paused", "next_fire_at", "id"],
        unique=False,
        postgresql_where=NO_TREE,
        sqlite_where=NO_TREE,
    )
    op.create_index(
        TREES,
        "workflow_schedules",
        ["id"],
        unique=False,
        postgresql_where=HAS_TREE,
        sqlite_where=HAS_TREE,
    )
    op.drop_index(FENCE, table_name="workflow_runs")
    op.create_index(
        FENCE,
        "workflow_runs",
        ["schedule_id", "status"],
        unique=False,
        postgresql_where=ACTIVE,
        sqlite_where=ACTIVE,
    )


def downgrade() -> None:
    op.drop_index(FENCE, table_name="workflow_runs")
    op.create_index(FENCE, "workflow_runs", ["schedule_id", "status"], unique=False)
    op.drop_index(TREES, table_name="workflow_schedules")
    op.drop_index(DUE, table_name="workflow_schedules")
    op.create_index(DUE, "workflow_schedules", ["paused", "next_fire_at"], unique=False)
