"""Compound and event triggers (SPEC §13): trigger trees and latches, event outbox, definitions.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.add_column(sa.Column("trigger_tree", sa.JSON(none_as_null=True), nullable=True))
        batch.add_column(sa.Column("latches", sa.JSON(none_as_null=True), nullable=True))
        batch.add_column(sa.Column("evaluated_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("trigger_keys", sa.Text(), nullable=True))
    op.create_table(
        "trigger_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("occurred_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_trigger_events"),
    )
    op.create_table(
        "workflow_definitions",
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("workflow_id", name="pk_workflow_definitions"),
    )


def downgrade() -> None:
    op.drop_table("workflow_definitions")
    op.drop_table("trigger_events")
    with op.batch_alter_table("workflow_schedules") as batch:
        batch.drop_column("trigger_keys")
        batch.drop_column("evaluated_at")
        batch.drop_column("latches")
        batch.drop_column("trigger_tree")
