"""The occurrence ledger's key becomes (table_id, trigger_id, identity).

A trigger id belongs to one table for good (its state row is never handed to another table, and
tables are never deleted), so the fence is unchanged: an identity of a trigger is still claimed at
most once. With the table first, a table's claims sit together in the key's index: the tick
claims a batch of tables one after the other, where random trigger-id keys had every batch dirty
pages all over the index (``bench/tick_bench.py`` (a) on SQLite: about 9% of the drain).

SQLite cannot change a primary key in place: the table is rebuilt (batch mode), rows kept.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

PK = "pk_occurrence_ledger"


def _key(columns: list[str]) -> None:
    with op.batch_alter_table("occurrence_ledger", recreate="auto") as batch:
        batch.drop_constraint(PK, type_="primary")
        batch.create_primary_key(PK, columns)


def upgrade() -> None:
    _key(["table_id", "trigger_id", "identity"])


def downgrade() -> None:
    _key(["trigger_id", "identity"])
