"""The tick's sweep of lost staged-change applications seeks an index, not the whole table.

``ix_staged_changes_status (status, updated_at)``: the sweep (``status = 'applying' AND
updated_at < cutoff``, every tick) had only ``ix_staged_changes_table (table_id, status)``, so it
read every staged change ever kept (applied and rejected ones stay as history). Measured
2026-12-04 on this machine under load (bench-like store, 20,000 applied changes, none applying):

- SQLite 3.40: ``SCAN staged_changes``, ~24-30 ms a sweep; with the index ``SEARCH … USING INDEX
  ix_staged_changes_status (status=? AND updated_at<?)``, ~0.3-0.8 ms;
- PostgreSQL 16 (``EXPLAIN ANALYZE``): ``Seq Scan on staged_changes … Rows Removed by Filter:
  20000``, 17.3 ms; with the index ``Index Scan using ix_staged_changes_status … Index Cond:
  ((status = 'applying') AND (updated_at < …))``, 0.02 ms.

Revision ID: 0031_idle
Revises: 0030_queue
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0031_idle"
down_revision: str | None = "0030_queue"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index(
        "ix_staged_changes_status", "staged_changes", ["status", "updated_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_staged_changes_status", table_name="staged_changes")
