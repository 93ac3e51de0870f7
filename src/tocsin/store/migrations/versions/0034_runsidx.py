"""A created run enters one status index, the claim's: ``ix_runs_status_updated`` becomes
``ix_runs_stuck``, over running and failed runs only.

``ix_runs_status_updated`` ``(status, updated_at, id)`` held every run: a pending run, a
running one and a done one each wrote an entry (a status change is never a heap-only update),
three per run over its life, one of them at insert, beside ``ix_runs_pending_scope``'s. Its
readers now:

- the claim reads ``ix_runs_pending_scope`` (migration 0029);
- the lost-pending sweep reads ``ix_runs_pending_scope`` too, scope by scope (a range of old
  pending runs in each), as the claim visits the scopes (``store.runs.requeue_runs``);
- the stale-run sweep (running runs older than the window), the ``stuck`` filter and its gauge
  (failed, or running and old) read ``ix_runs_stuck`` ``(status, updated_at, id) WHERE status =
  'running' OR status = 'failed'``: a run enters it when it starts, leaves it when it is done.

Revision ID: 0034_runsidx
Revises: 0033_pauseat
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0034_runsidx"
down_revision: str | None = "0033_pauseat"
branch_labels: str | None = None
depends_on: str | None = None

STUCK_CANDIDATE_WHERE = "status = 'running' OR status = 'failed'"


def upgrade() -> None:
    op.drop_index("ix_runs_status_updated", table_name="runs")
    op.create_index(
        "ix_runs_stuck",
        "runs",
        ["status", "updated_at", "id"],
        unique=False,
        postgresql_where=sa.text(STUCK_CANDIDATE_WHERE),
        sqlite_where=sa.text(STUCK_CANDIDATE_WHERE),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_stuck", table_name="runs")
    op.create_index("ix_runs_status_updated", "runs", ["status", "updated_at", "id"], unique=False)
