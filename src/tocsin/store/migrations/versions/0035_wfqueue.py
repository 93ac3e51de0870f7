"""Workflow runs become rows of the one run table ``runs`` (kind ``workflow``).

- ``runs`` gets the columns only a workflow run has, nullable (NULL in every other kind's row):
  ``schedule_id``, ``input``, ``output``, ``initial_state``, ``request_context``,
  ``suspend_payload``, ``resume_data``, ``alert``, ``attempt``;
- every ``workflow_runs`` row moves into ``runs``, same id: kind ``workflow``, ``table_id`` ''
  (as a lane attempt's), its workflow as ``trigger_id``, its trigger word (scheduled | manual |
  backfill) as ``source``, its own status words, its step receipts as ``action_results``,
  ``ended_at`` as ``finished_at``, the app's scope, ``payload`` ``{}``; ``workflow_runs`` is
  dropped;
- a workflow run writes no more index entries than it did in ``workflow_runs``: the table runs'
  indexes that a workflow run would enter become partial: ``ix_runs_table_created`` over a
  table's runs (``table_id <> ''``: no lane attempt either), ``ix_runs_stuck`` (``(status =
  'running' OR status = 'failed') AND kind <> 'workflow'``) and ``ix_runs_pending_scope``
  (``status = 'pending' AND kind <> 'workflow'``); the others hold no
  workflow run already (``uq_runs_one_active_clock``: clock runs; ``ix_runs_trigger_fires``:
  source ``schedule``; ``ix_runs_running_limited``: a ``max_concurrent``). The workflow runs'
  three indexes become partial indexes of ``runs`` ``WHERE kind = 'workflow'``, same columns:
  ``ix_runs_workflow_status (status, updated_at, id)`` (the claim order),
  ``ix_runs_workflow_created (trigger_id, created_at)`` (a workflow's runs) and
  ``ix_runs_workflow_schedule (schedule_id, status)`` ``AND status IN ('pending', 'running')``
  (the overlap fence).

The downgrade moves the workflow rows back into a new ``workflow_runs`` (its indexes as before)
and deletes them from ``runs``; the table runs' indexes are as at 0034 again.

Revision ID: 0035_wfqueue
Revises: 0034_runsidx
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0035_wfqueue"
down_revision: str | None = "0034_runsidx"
branch_labels: str | None = None
depends_on: str | None = None

QUEUE = "kind <> 'workflow'"
TABLE_RUN = "table_id <> ''"
WORKFLOW = "kind = 'workflow'"
PENDING = "status = 'pending'"
STUCK = "status = 'running' OR status = 'failed'"  # ix_runs_stuck's at 0034
ACTIVE = "status IN ('pending', 'running')"

_JSON_COLUMNS = (
    "input",
    "output",
    "initial_state",
    "request_context",
    "suspend_payload",
    "resume_data",
    "alert",
)
# a workflow run's columns that keep their name in ``runs``
_SAME = (
    "id",
    "schedule_id",
    "status",
    "attempts",
    "input",
    "output",
    "error",
    "initial_state",
    "request_context",
    "suspend_payload",
    "resume_data",
    "scheduled_for",
    "created_at",
    "updated_at",
    "started_at",
    "next_attempt_at",
    "alert",
    "attempt",
)
_SAME_LIST = ", ".join(_SAME)

_MOVE = (
    f"INSERT INTO runs ({_SAME_LIST}, kind, table_id, trigger_id, source, clock,"
    " action_results, finished_at, payload, scope)"
    f" SELECT {_SAME_LIST}, 'workflow', '', workflow_id, \"trigger\", {{false}}, steps, ended_at,"
    " '{{}}', 'app' FROM workflow_runs"
)
_BACK = (
    f'INSERT INTO workflow_runs ({_SAME_LIST}, workflow_id, "trigger", steps, ended_at)'
    f" SELECT {', '.join('coalesce(attempt, 1)' if n == 'attempt' else n for n in _SAME)},"
    f" trigger_id, source, action_results, finished_at FROM runs WHERE {WORKFLOW}"
)


def _index(name: str, columns: list[str], where: str | None = None) -> None:
    if where is None:
        op.create_index(name, "runs", columns, unique=False)
        return
    partial = sa.text(where)
    op.create_index(
        name, "runs", columns, unique=False, postgresql_where=partial, sqlite_where=partial
    )


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.add_column("runs", sa.Column("schedule_id", sa.String(64), nullable=True))
    for name in _JSON_COLUMNS:
        op.add_column("runs", sa.Column(name, sa.JSON(), nullable=True))
    op.add_column("runs", sa.Column("attempt", sa.Integer(), nullable=True))
    for name in ("ix_runs_table_created", "ix_runs_stuck", "ix_runs_pending_scope"):
        op.drop_index(name, table_name="runs")
    op.execute(_MOVE.format(false="false" if postgres else "0"))
    op.drop_table("workflow_runs")  # its indexes with it
    _index("ix_runs_table_created", ["table_id", "created_at"], TABLE_RUN)
    _index("ix_runs_stuck", ["status", "updated_at", "id"], f"({STUCK}) AND {QUEUE}")
    _index("ix_runs_pending_scope", ["scope", "updated_at", "id"], f"{PENDING} AND {QUEUE}")
    _index("ix_runs_workflow_status", ["status", "updated_at", "id"], WORKFLOW)
    _index("ix_runs_workflow_created", ["trigger_id", "created_at"], WORKFLOW)
    _index("ix_runs_workflow_schedule", ["schedule_id", "status"], f"{WORKFLOW} AND {ACTIVE}")


def downgrade() -> None:
    op.create_table(
        "workflow_runs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=True),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("input", sa.JSON(), nullable=True),
        sa.Column("output", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("initial_state", sa.JSON(), nullable=True),
        sa.Column("request_context", sa.JSON(), nullable=True),
        sa.Column("suspend_payload", sa.JSON(), nullable=True),
        sa.Column("resume_data", sa.JSON(), nullable=True),
        sa.Column("scheduled_for", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column("attempt", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=True),
        sa.Column("alert", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_workflow_runs"),
    )
    op.execute(_BACK)
    op.execute(f"DELETE FROM runs WHERE {WORKFLOW}")
    op.create_index(
        "ix_workflow_runs_status", "workflow_runs", ["status", "updated_at", "id"], unique=False
    )
    op.create_index(
        "ix_workflow_runs_workflow", "workflow_runs", ["workflow_id", "created_at"], unique=False
    )
    op.create_index(
        "ix_workflow_runs_schedule",
        "workflow_runs",
        ["schedule_id", "status"],
        unique=False,
        postgresql_where=sa.text(ACTIVE),
        sqlite_where=sa.text(ACTIVE),
    )
    for name in (
        "ix_runs_workflow_schedule",
        "ix_runs_workflow_created",
        "ix_runs_workflow_status",
        "ix_runs_pending_scope",
        "ix_runs_stuck",
        "ix_runs_table_created",
    ):
        op.drop_index(name, table_name="runs")
    _index("ix_runs_table_created", ["table_id", "created_at"])
    _index("ix_runs_stuck", ["status", "updated_at", "id"], STUCK)
    _index("ix_runs_pending_scope", ["scope", "updated_at", "id"], PENDING)
    for name in ("attempt", *reversed(_JSON_COLUMNS), "schedule_id"):
        op.execute(f'ALTER TABLE runs DROP COLUMN "{name}"')  # SQLite 3.35+ too: no rebuild
