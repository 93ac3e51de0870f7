"""A write's row snapshot is stored once, not once per run.

- ``row_snapshots (id, payload)``: the row a batch of runs was created with.
- ``runs.snapshot_id``: the snapshot a run names; its own ``payload`` is then ``{}``. Readers
  take the snapshot's payload, else the run's own (``store.snapshots.PAYLOAD``).

The runs already stored move here: the runs of one record created at one instant by one event
with one payload text (the runs one write or one tick created from one row) get one snapshot,
named by the smallest of their ids; their own copies become ``{}``. A run without a record keeps
its payload. The downgrade copies each snapshot back into its runs.

Revision ID: 0028_e
Revises: 0027
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028_e"
down_revision: str | None = "0027"
branch_labels: str | None = None
depends_on: str | None = None

# the runs that carry a row; on PostgreSQL ``json`` has no equality: rows compare as text
_CARRIES = "runs.record_id IS NOT NULL AND CAST(runs.payload AS TEXT) <> '{}'"
_SAME_WRITE = (
    "first.table_id = runs.table_id AND first.created_at = runs.created_at"
    " AND first.record_id = runs.record_id AND first.source = runs.source"
)


def upgrade() -> None:
    op.create_table(
        "row_snapshots",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("snapshot_id", sa.String(length=36), nullable=True))
    json = "CAST(pl AS json)" if op.get_bind().dialect.name == "postgresql" else "pl"
    # one snapshot per write: its row, named by the smallest run id of the write
    op.execute(
        f"INSERT INTO row_snapshots (id, payload) SELECT min(id), {json} FROM (SELECT runs.id,"
        " runs.table_id, runs.created_at, runs.record_id, runs.source,"
        f" CAST(runs.payload AS TEXT) AS pl FROM runs WHERE {_CARRIES}) AS carried"
        " GROUP BY table_id, created_at, record_id, source, pl"
    )
    # each run names its write's snapshot: among the runs of its write (an index range of
    # ix_runs_table_created), the one whose id names a snapshot with the same row
    op.execute(
        "UPDATE runs SET snapshot_id = (SELECT s.id FROM runs AS first"
        " JOIN row_snapshots AS s ON s.id = first.id"
        f" WHERE {_SAME_WRITE}"
        " AND CAST(s.payload AS TEXT) = CAST(runs.payload AS TEXT))"
        f" WHERE {_CARRIES}"
    )
    op.execute("UPDATE runs SET payload = '{}' WHERE snapshot_id IS NOT NULL")


def downgrade() -> None:
    op.execute(
        "UPDATE runs SET payload = (SELECT s.payload FROM row_snapshots AS s"
        " WHERE s.id = runs.snapshot_id) WHERE snapshot_id IS NOT NULL"
    )
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("snapshot_id")
    op.drop_table("row_snapshots")
