"""Automatic retries and failure alerts of workflow runs and lane attempts.

- ``workflow_runs.attempt`` (the number of the current attempt, 1 until a failure is retried),
  ``workflow_runs.next_attempt_at`` (a retried run is not claimed before it) and
  ``workflow_runs.alert`` (the ``on_failure`` outcome);
- ``lane_attempts.next_attempt_at`` and ``lane_attempts.alert``: the same for lane attempts.

Revision ID: 0029_retry
Revises: 0028_e
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_retry"
down_revision: str | None = "0029_fair"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("workflow_runs") as batch:
        batch.add_column(
            sa.Column("attempt", sa.Integer(), nullable=False, server_default=sa.text("1"))
        )
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("alert", sa.JSON(), nullable=True))
    with op.batch_alter_table("lane_attempts") as batch:
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("alert", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lane_attempts") as batch:
        batch.drop_column("alert")
        batch.drop_column("next_attempt_at")
    with op.batch_alter_table("workflow_runs") as batch:
        batch.drop_column("alert")
        batch.drop_column("next_attempt_at")
        batch.drop_column("attempt")
