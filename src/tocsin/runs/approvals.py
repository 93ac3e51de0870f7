"""The approval gate's decisions and application (SPEC §9.6).

Write actions on a ``requires_approval`` table stage a change (``tocsin.actions.records``).
Here a moderator approves or rejects a staged change, and a worker applies approved ones through
the same record writer as any write (row events and validation apply; the gate is not consulted
again). A change whose application was lost (worker crash while ``applying``) is handed back to
``approved`` by the tick's sweep (``engine.sweeps.requeue_staged_changes``).

Applying is at-least-once: a crash after the record write but before the change is marked
``applied`` lets the sweep apply it again.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionEnv
from tocsin.core.config.receipts import truncate_error
from tocsin.core.model import StagedChange
from tocsin.errors import Conflict, NotFound
from tocsin.runs.retry import TransientPolicy, call_with_retries, is_retryable
from tocsin.store.approvals import claim_approved_change, decide_change, finish_change, get_change
from tocsin.store.tx import Store

log = logging.getLogger(__name__)


def decide(
    store: Store, *, table_id: str, change_id: str, status: str, now: datetime
) -> dict[str, Any]:
    """``staged → approved | rejected``; 404 unknown (or other table), 409 already decided."""
    with store.begin() as tx:
        decided = decide_change(tx, change_id=change_id, table_id=table_id, status=status, now=now)
        if decided is not None:
            return decided.as_dict()
        current = get_change(tx, change_id=change_id)
    if current is None or current.table_id != table_id:
        raise NotFound(messages.STAGED_CHANGE_NOT_FOUND)
    raise Conflict(messages.staged_change_decided(current.status))


def apply_change(env: ActionEnv, change: StagedChange, *, now: datetime) -> None:
    """The write a staged change stands for."""
    operation, table_id = change.operation, change.table_id
    values = dict(change.values or {})
    if operation == "create":
        env.records.create_record(table_id, values, now=now)
    elif operation == "update":
        env.records.update_record(table_id, str(change.record_id), values, now=now)
    elif operation == "delete":
        env.records.delete_record(table_id, str(change.record_id), now=now)
    else:
        raise ValueError(messages.staged_operation_unknown(operation))


def apply_approved(
    env: ActionEnv, *, now: datetime, policy: TransientPolicy, limit: int | None = None
) -> int:
    """Claim and apply approved changes (``approved → applying → applied | failed``).

    A change whose lock conflict outlived its retries goes back to ``approved`` and ends this
    pass: claiming it again at once would spin on the same conflict.
    """
    count = 0
    while limit is None or count < limit:
        with env.store.begin() as tx:
            change = claim_approved_change(tx, now=now)
        if change is None:
            break
        count += 1
        status, error = _apply(env, change, now=now, policy=policy)
        finish = partial(_finish, env, change.id, status, error, now)
        call_with_retries(finish, policy)
        if status == "approved":
            break
    return count


def _apply(
    env: ActionEnv, change: StagedChange, *, now: datetime, policy: TransientPolicy
) -> tuple[str, str | None]:
    """Apply one claimed change: ``("applied", None)``, or the status and error to store."""
    try:
        call_with_retries(partial(apply_change, env, change, now=now), policy)
    except Exception as exc:
        # a conflict that outlived its retries goes back to approved; the rest fails
        error = truncate_error(str(exc) or type(exc).__name__)
        log.warning("staged change %s: %s", change.id, error)
        return ("approved" if is_retryable(exc) else "failed"), error
    return "applied", None


def _finish(env: ActionEnv, change_id: str, status: str, error: str | None, now: datetime) -> None:
    with env.store.begin() as tx:
        finish_change(tx, change_id=change_id, status=status, error=error, now=now)
