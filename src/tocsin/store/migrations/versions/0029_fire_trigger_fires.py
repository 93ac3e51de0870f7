"""A table trigger's fire history is read from its scheduled runs.

``ix_runs_trigger_fires (table_id, trigger_id, scheduled_for, id)`` over the runs a schedule
fired (``source = 'schedule'``): ``GET …/triggers/{trigger_id}/fires`` pages and counts one
trigger's fires from it, newest instant first, however many row-event runs its table holds (they
are not in it: a write's runs pay nothing for it).

Revision ID: 0029_fire
Revises: 0029_lanes
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_fire"
down_revision: str | None = "0029_lanes"
branch_labels: str | None = None
depends_on: str | None = None

SCHEDULED = sa.text("source = 'schedule'")


def upgrade() -> None:
    op.create_index(
        "ix_runs_trigger_fires",
        "runs",
        ["table_id", "trigger_id", "scheduled_for", "id"],
        unique=False,
        postgresql_where=SCHEDULED,
        sqlite_where=SCHEDULED,
    )


def downgrade() -> None:
    op.drop_index("ix_runs_trigger_fires", table_name="runs")
