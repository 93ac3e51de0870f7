"""The workflow-run claim walks an index in its order (bench/workflow_bench.py on PostgreSQL).

``ix_workflow_runs_status`` becomes ``(status, updated_at, id)``: the claim's ``ORDER BY
updated_at, id`` is then the index order (PostgreSQL sorted every pending run per claim; SQLite
built a temporary B-tree), and the stale-run sweep (``status, updated_at < cutoff``) still uses
its prefix.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.drop_index("ix_workflow_runs_status", table_name="workflow_runs")
    op.create_index(
        "ix_workflow_runs_status", "workflow_runs", ["status", "updated_at", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_workflow_runs_status", table_name="workflow_runs")
    op.create_index(
        "ix_workflow_runs_status", "workflow_runs", ["status", "updated_at"], unique=False
    )
