"""``ix_trigger_state_table`` goes: the primary key ``(table_id, trigger_id)`` (0020) serves
every lookup by table, so the extra index only cost the writes of every state row.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.drop_index("ix_trigger_state_table", table_name="trigger_state")


def downgrade() -> None:
    op.create_index("ix_trigger_state_table", "trigger_state", ["table_id"], unique=False)
