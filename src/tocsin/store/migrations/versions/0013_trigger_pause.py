"""Table schedule triggers pause and resume: kept in the trigger's state row.

``paused_at``: set while the trigger is paused (the tick neither plans it nor keeps its table
due); ``pause_windows``: a date trigger's past pauses as ``[[from, until], ...]`` (ISO instants),
whose occurrences never fire after a resume.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("trigger_state") as batch:
        batch.add_column(sa.Column("paused_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("pause_windows", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("trigger_state") as batch:
        batch.drop_column("pause_windows")
        batch.drop_column("paused_at")
