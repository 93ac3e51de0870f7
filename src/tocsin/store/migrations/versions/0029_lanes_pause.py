"""Lanes pause and resume: kept in the lane's row.

``lanes.paused_at``: set while the lane is paused (the tick does not claim it; its resume
records the instants passed meanwhile as ``paused`` skips and runs none of them). Existing lanes
stay unpaused.

Revision ID: 0029_lanes
Revises: 0028_e
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_lanes"
down_revision: str | None = "0029_retry"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("lanes") as batch:
        batch.add_column(sa.Column("paused_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lanes") as batch:
        batch.drop_column("paused_at")
