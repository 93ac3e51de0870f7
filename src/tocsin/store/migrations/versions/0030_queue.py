"""One run queue: a lane attempt's queue columns move into ``runs`` (its row there, same id).

- ``runs.kind`` (``actions`` for every run stored so far) and ``runs.id`` widened to 48
  characters (a lane attempt's id is 40);
- every lane attempt gets its row in ``runs``: kind ``lane``, ``table_id`` '', its lane as
  ``trigger_id``, source ``lane``, the app's scope, its run's ``scheduled_for``, its state as
  ``status``, its ``next_attempt_at``, ``created_at`` and ``updated_at``; ``attempts`` 1 once
  it was claimed;
- ``lane_attempts`` loses ``state``, ``next_attempt_at`` and ``updated_at`` (and
  ``ix_lane_attempts_state``): ``runs`` is their one source.

The downgrade moves them back and deletes the lane rows from ``runs``.

Revision ID: 0030_queue
Revises: 0029_fire
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030_queue"
down_revision: str | None = "0029_fire"
branch_labels: str | None = None
depends_on: str | None = None

_MOVE = (
    "INSERT INTO runs (id, kind, table_id, trigger_id, record_id, source, clock, status,"
    " attempts, error, action_results, payload, scheduled_for, created_at, updated_at,"
    " next_attempt_at, scope) SELECT a.attempt_id, 'lane', '', a.lane_id, NULL, 'lane',"
    " {false}, a.state, CASE WHEN a.state = 'pending' THEN 0 ELSE 1 END, NULL, '[]', '{{}}',"
    " (SELECT r.scheduled_for FROM lane_runs AS r WHERE r.run_id = a.run_id), a.created_at,"
    " a.updated_at, a.next_attempt_at, 'app' FROM lane_attempts AS a"
)
_BACK = (
    "UPDATE lane_attempts SET state = r.status, updated_at = r.updated_at,"
    " next_attempt_at = r.next_attempt_at FROM runs AS r WHERE r.id = lane_attempts.attempt_id"
)


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    with op.batch_alter_table("runs") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(16), server_default=sa.text("'actions'"), nullable=False)
        )
    if postgres:
        op.alter_column("runs", "id", type_=sa.String(48), existing_type=sa.String(36))
    else:  # SQLite: the type is the declared one only (no length is enforced); rebuilt in place
        with op.batch_alter_table("runs", recreate="always") as batch:
            batch.alter_column("id", type_=sa.String(48), existing_type=sa.String(36))
    op.execute(_MOVE.format(false="false" if postgres else "0"))
    op.drop_index("ix_lane_attempts_state", table_name="lane_attempts")
    with op.batch_alter_table("lane_attempts") as batch:
        batch.drop_column("state")
        batch.drop_column("next_attempt_at")
        batch.drop_column("updated_at")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    with op.batch_alter_table("lane_attempts") as batch:
        batch.add_column(sa.Column("state", sa.String(16), nullable=True))
        batch.add_column(sa.Column("updated_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
    op.execute(_BACK)
    with op.batch_alter_table("lane_attempts") as batch:
        batch.alter_column("state", nullable=False, existing_type=sa.String(16))
        batch.alter_column("updated_at", nullable=False, existing_type=sa.DateTime())
    op.create_index("ix_lane_attempts_state", "lane_attempts", ["state", "created_at"])
    op.execute("DELETE FROM runs WHERE kind <> 'actions'")
    if postgres:
        op.alter_column("runs", "id", type_=sa.String(36), existing_type=sa.String(48))
    else:
        with op.batch_alter_table("runs", recreate="always") as batch:
            batch.alter_column("id", type_=sa.String(36), existing_type=sa.String(48))
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("kind")
