"""trigger_state keeps half of each PostgreSQL page free (fillfactor 50).

Every fire of a clock trigger rewrites its state row (``last_consumed``, ``next_due_at``,
``updated_at``: no indexed column), and a tick rewrites the states of a batch of tables together,
so every row of a page is rewritten at once. With room on the page for a new version of each
row, PostgreSQL makes these heap-only (HOT) updates: no new index entries, and old versions are
pruned on the page. ``bench/tick_bench.py`` (a): the bulk window consumption took half the time.
The setting applies to pages written from now on; SQLite has no such setting (nothing to do).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

FILLFACTOR = 50


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE trigger_state SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE trigger_state RESET (fillfactor)")
