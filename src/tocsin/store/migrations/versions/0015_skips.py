"""The skip ledger: occurrences that were due and did not fire, as ranges; and the
catch-up policy of workflow schedules.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "skips",
        sa.Column("target_kind", sa.String(16), nullable=False),
        sa.Column("target_id", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("first_instant", sa.DateTime(), nullable=False),
        sa.Column("last_instant", sa.DateTime(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("at_least", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("table_id", sa.String(36), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint(
            "target_kind", "target_id", "reason", "first_instant", name="pk_skips"
        ),
    )
    op.create_index(
        "ix_skips_last", "skips", ["target_kind", "target_id", "reason", "last_instant"]
    )
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.add_column(
            sa.Column("catch_up", sa.String(8), server_default="latest", nullable=False)
        )
        batch.add_column(
            sa.Column("max_catch_up", sa.Integer(), server_default=sa.text("100"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.drop_column("max_catch_up")
        batch.drop_column("catch_up")
    op.drop_table("skips")
