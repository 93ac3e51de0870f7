"""Automatic retries and signed webhooks: ``runs.next_attempt_at``, signing secrets.

Revision ID: 0011
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
    op.create_table(
        "signing_secrets",
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(36), nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("scope", "scope_id", name="pk_signing_secrets"),
    )


def downgrade() -> None:
    op.drop_table("signing_secrets")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("next_attempt_at")
