"""The table-run claim walks an index in its order, as the workflow-run claim does (0016).

``ix_runs_status_updated`` becomes ``(status, updated_at, id)``: the worker's claim ``WHERE
status = 'pending' ORDER BY updated_at, id LIMIT n`` is then the index order and stops after
``n`` rows (PostgreSQL sorted every pending run per claim: 5,000 pending, a claim of 10). The
stale-run sweep and ``requeue`` (``status, updated_at``) still use its prefix.

Revision ID: 0019
Revises: 0017
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0019"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.drop_index("ix_runs_status_updated", table_name="runs")
    op.create_index("ix_runs_status_updated", "runs", ["status", "updated_at", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_runs_status_updated", table_name="runs")
    op.create_index("ix_runs_status_updated", "runs", ["status", "updated_at"], unique=False)
