"""Workflows and code-declared schedules (SPEC §12): schedules, fires, runs; token permissions.

Chained after 0004 (token expiry); the revision keeps its number 0006.

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def _json() -> sa.JSON:
    return sa.JSON(none_as_null=True)


def upgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("permissions", _json(), nullable=True))
    op.create_table(
        "workflow_schedules",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("cron", sa.String(200), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("overlap", sa.String(8), nullable=False),
        sa.Column("input_data", _json(), nullable=True),
        sa.Column("initial_state", _json(), nullable=True),
        sa.Column("request_context", _json(), nullable=True),
        sa.Column("meta", _json(), nullable=True),
        sa.Column("paused", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("next_fire_at", sa.DateTime(), nullable=True),
        sa.Column("last_fire_id", sa.String(36), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_workflow_schedules"),
    )
    op.create_index("ix_workflow_schedules_due", "workflow_schedules", ["paused", "next_fire_at"])
    op.create_index("ix_workflow_schedules_workflow", "workflow_schedules", ["workflow_id"])
    op.create_table(
        "schedule_fires",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(), nullable=False),
        sa.Column("fired_at", sa.DateTime(), nullable=False),
        sa.Column("run_id", sa.String(36), nullable=True),
        sa.Column("publish_status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_schedule_fires"),
    )
    op.create_index("ix_schedule_fires_page", "schedule_fires", ["schedule_id", "scheduled_for"])
    _workflow_runs()


def _workflow_runs() -> None:
    op.create_table(
        "workflow_runs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=True),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("input", _json(), nullable=True),
        sa.Column("output", _json(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("initial_state", _json(), nullable=True),
        sa.Column("request_context", _json(), nullable=True),
        sa.Column("suspend_payload", _json(), nullable=True),
        sa.Column("resume_data", _json(), nullable=True),
        sa.Column("scheduled_for", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_workflow_runs"),
    )
    op.create_index("ix_workflow_runs_status", "workflow_runs", ["status", "updated_at"])
    op.create_index("ix_workflow_runs_workflow", "workflow_runs", ["workflow_id", "created_at"])
    op.create_index("ix_workflow_runs_schedule", "workflow_runs", ["schedule_id", "status"])


def downgrade() -> None:
    op.drop_table("workflow_runs")
    op.drop_table("schedule_fires")
    op.drop_table("workflow_schedules")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("permissions")
