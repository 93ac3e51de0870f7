"""Initial schema: every table and index of ``tocsin.store.schema`` (DESIGN §5).

Instants are naive-UTC ``DateTime`` columns (``UTCDateTime`` in tables.py is a TypeDecorator over
``DateTime``). ``uq_runs_one_active_clock`` is a partial unique index on both dialects: at most
one pending/running run per clock trigger (SPEC §5.3, STYLE F4).

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


TABLES = (
    "tables",
    "records",
    "trigger_state",
    "occurrence_ledger",
    "runs",
    "chat_messages",
    "staged_changes",
    "command_results",
    "api_tokens",
)  # creation order (foreign keys first)


def upgrade() -> None:
    _create_tables()
    _create_records()
    _create_trigger_state()
    _create_occurrence_ledger()
    _create_runs()
    _create_chat_messages()
    _create_staged_changes()
    _create_command_results()
    _create_api_tokens()


def downgrade() -> None:
    for name in reversed(TABLES):
        op.drop_table(name)  # drops its indexes too


def _create_tables() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("triggers", sa.JSON(), nullable=True),
        sa.Column("scp_rules", sa.JSON(), nullable=True),
        sa.Column(
            "requires_approval", sa.Boolean(), server_default=sa.text("false"), nullable=False
        ),
        sa.Column("trashed", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("next_due_at", sa.DateTime(), nullable=True),
        sa.Column("last_ticked_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tables")),
    )
    op.create_index("ix_tables_candidates", "tables", ["trashed", "last_ticked_at"], unique=False)
    op.create_index("ix_tables_next_due", "tables", ["next_due_at"], unique=False)
    op.create_index("ix_tables_scope", "tables", ["scope", "scope_id"], unique=False)


def _create_records() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("trashed", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["tables.id"], name=op.f("fk_records_table_id_tables"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
    )
    op.create_index(
        "ix_records_page", "records", ["table_id", "trashed", "created_at", "id"], unique=False
    )


def _create_trigger_state() -> None:
    op.create_table(
        "trigger_state",
        sa.Column("trigger_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("anchor", sa.DateTime(), nullable=True),
        sa.Column("last_consumed", sa.DateTime(), nullable=True),
        sa.Column("cursor_created_at", sa.DateTime(), nullable=True),
        sa.Column("cursor_id", sa.String(length=36), nullable=True),
        sa.Column("schedule_hash", sa.String(length=64), nullable=True),
        sa.Column("retired", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("next_due_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_trigger_state_table_id_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("trigger_id", name=op.f("pk_trigger_state")),
    )
    op.create_index("ix_trigger_state_table", "trigger_state", ["table_id"], unique=False)


def _create_occurrence_ledger() -> None:
    op.create_table(
        "occurrence_ledger",
        sa.Column("trigger_id", sa.String(length=64), nullable=False),
        sa.Column("identity", sa.String(length=200), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("trigger_id", "identity", name=op.f("pk_occurrence_ledger")),
    )


def _create_runs() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=False),
        sa.Column("trigger_id", sa.String(length=64), nullable=False),
        sa.Column("record_id", sa.String(length=36), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("clock", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("action_results", sa.JSON(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=True),
        sa.Column("identity", sa.String(length=200), nullable=True),
        sa.Column("scheduled_for", sa.DateTime(), nullable=True),
        sa.Column("enqueued_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_status_updated", "runs", ["status", "updated_at"], unique=False)
    op.create_index("ix_runs_table_created", "runs", ["table_id", "created_at"], unique=False)
    op.create_index(
        "uq_runs_one_active_clock",
        "runs",
        ["trigger_id"],
        unique=True,
        postgresql_where=sa.text("clock AND status IN ('pending', 'running')"),
        sqlite_where=sa.text("clock AND status IN ('pending', 'running')"),
    )


def _create_chat_messages() -> None:
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("chatroom_id", sa.String(length=36), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=True),
        sa.Column("run_id", sa.String(length=36), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_messages")),
    )
    op.create_index(
        "ix_chat_messages_room", "chat_messages", ["chatroom_id", "created_at"], unique=False
    )


def _create_staged_changes() -> None:
    op.create_table(
        "staged_changes",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("table_id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=True),
        sa.Column("action_id", sa.String(length=64), nullable=True),
        sa.Column("operation", sa.String(length=16), nullable=False),
        sa.Column("record_id", sa.String(length=36), nullable=True),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(), nullable=True),
        sa.Column("applied_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staged_changes")),
    )
    op.create_index(
        "ix_staged_changes_table", "staged_changes", ["table_id", "status"], unique=False
    )


def _create_command_results() -> None:
    op.create_table(
        "command_results",
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("command", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("idempotency_key", name=op.f("pk_command_results")),
    )


def _create_api_tokens() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=36), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
