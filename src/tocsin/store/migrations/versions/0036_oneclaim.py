"""Workflow runs join the one claim (``store.runs.claim_scoped_runs``).

- a workflow run's ``scope`` becomes a path under the app's tenant scope: ``app/wf:<workflow>``
  (was ``app``), one turn of the claim for all its runs, where a workflow's ``max_concurrent``
  limits them. A run of a schedule declaring ``max_concurrent`` is inserted with a scope of its
  own within, ``app/wf:<workflow>/<schedule>`` (``store.workflow_runs.insert_runs``, from the
  inserting process's registry); the database does not hold a schedule's limit
  (``workflow_schedules`` has no such column), so this migration gives every existing run its
  workflow's scope: a schedule's limit holds for its runs inserted after the upgrade, its runs
  already pending then count toward their workflow's limit only;
- ``ix_runs_pending_scope`` holds every pending run, of every kind (``status = 'pending'``; was
  ``AND kind <> 'workflow'``): the one claim finds the pending workflow runs there;
- ``ix_runs_workflow_status`` holds the workflow runs past pending only (``kind = 'workflow'
  AND status <> 'pending'``), columns ``(status, scope, updated_at)`` (were ``(status,
  updated_at, id)`` of every workflow run): the running runs of a scope, counted by the claim,
  and the stale sweep's running runs by ``updated_at``. A workflow run still enters as many
  indexes at each status as before (pending: this and the claim's index trade places).

The downgrade gives workflow runs the app's scope ``app`` and the indexes of 0035 back.

Revision ID: 0036_oneclaim
Revises: 0035_wfqueue
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0036_oneclaim"
down_revision: str | None = "0035_wfqueue"
branch_labels: str | None = None
depends_on: str | None = None

WORKFLOW = "kind = 'workflow'"
PENDING = "status = 'pending'"
_SCOPED = f"UPDATE runs SET scope = 'app/wf:' || trigger_id WHERE {WORKFLOW}"


def _index(name: str, columns: list[str], where: str) -> None:
    partial = sa.text(where)
    op.create_index(
        name, "runs", columns, unique=False, postgresql_where=partial, sqlite_where=partial
    )


def upgrade() -> None:
    op.drop_index("ix_runs_pending_scope", table_name="runs")
    op.drop_index("ix_runs_workflow_status", table_name="runs")
    op.execute(_SCOPED)
    _index("ix_runs_pending_scope", ["scope", "updated_at", "id"], PENDING)
    _index(
        "ix_runs_workflow_status",
        ["status", "scope", "updated_at"],
        f"{WORKFLOW} AND status <> 'pending'",
    )


def downgrade() -> None:
    op.drop_index("ix_runs_pending_scope", table_name="runs")
    op.drop_index("ix_runs_workflow_status", table_name="runs")
    op.execute(f"UPDATE runs SET scope = 'app' WHERE {WORKFLOW}")
    _index(
        "ix_runs_pending_scope", ["scope", "updated_at", "id"], f"{PENDING} AND kind <> 'workflow'"
    )
    _index("ix_runs_workflow_status", ["status", "updated_at", "id"], WORKFLOW)
