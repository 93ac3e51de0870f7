"""Lanes (SPEC §14): lanes, lane runs, lane attempts with their run contracts.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    _lanes()
    _lane_runs()
    _lane_attempts()


def _lanes() -> None:
    op.create_table(
        "lanes",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("cron", sa.String(200), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("policy_version", sa.String(200), nullable=False),
        sa.Column("next_fire_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_lanes"),
    )
    op.create_index("ix_lanes_due", "lanes", ["next_fire_at"])


def _lane_runs() -> None:
    op.create_table(
        "lane_runs",
        sa.Column("run_id", sa.String(40), nullable=False),
        sa.Column("lane_id", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(), nullable=False),
        sa.Column("window_start", sa.DateTime(), nullable=False),
        sa.Column("window_end", sa.DateTime(), nullable=False),
        sa.Column("policy_version", sa.String(200), nullable=False),
        sa.Column("admitted", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("decision", sa.String(16), nullable=True),
        sa.Column("handler_status", sa.String(16), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_lane_runs"),
    )
    op.create_index(
        "ix_lane_runs_window", "lane_runs", ["lane_id", "admitted", "window_start", "window_end"]
    )


def _lane_attempts() -> None:
    op.create_table(
        "lane_attempts",
        sa.Column("attempt_id", sa.String(48), nullable=False),
        sa.Column("run_id", sa.String(40), nullable=False),
        sa.Column("lane_id", sa.String(64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("observed_at", sa.DateTime(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("decision_status", sa.String(16), nullable=True),
        sa.Column("decision_reason", sa.String(32), nullable=True),
        sa.Column("contract", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("handler_status", sa.String(16), nullable=True),
        sa.Column("handler_error", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("attempt_id", name="pk_lane_attempts"),
        sa.UniqueConstraint("run_id", "attempt", name="uq_lane_attempts_run_attempt"),
    )
    op.create_index("ix_lane_attempts_page", "lane_attempts", ["lane_id", "created_at"])
    op.create_index(
        "ix_lane_attempts_decision",
        "lane_attempts",
        ["lane_id", "decision_status", "created_at"],
    )
    op.create_index("ix_lane_attempts_state", "lane_attempts", ["state", "created_at"])


def downgrade() -> None:
    op.drop_table("lane_attempts")
    op.drop_table("lane_runs")
    op.drop_table("lanes")
