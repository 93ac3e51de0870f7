"""Failure alerts (``on_failure``) of every kind of run: the one module that runs them.

- A table run's ``on_failure`` actions: the worker (``runs.worker``) sends each through
  :func:`send_action`, storing its receipt beside the run's (an action whose effect is a write to
  tocsin's database commits with its receipt: ``commit``).
- A workflow run's and a lane attempt's: :func:`alert_failed_run`, once the run failed for good
  (never for an attempt that will be retried). ``alerts`` is a list of actions, rendered with
  ``$run.error``, ``$run.id``, ``$schedule.id`` and ``$workflow.id`` by the trigger actions'
  template engine, run in order (a failed one is recorded and the others still go); or a Python
  callable, called with the failed run (its public view). Its outcome is returned to be recorded
  on the run; a failure of the alert itself is logged and recorded, never alerted on again and
  never retried by the run's policy.

Declared in code, a workflow's, schedule's or lane's actions are trusted: they carry no tenant
token (``core.exposure.SAVED_BY``), so ``start_workflow`` / ``invoke_command`` reach app code as
an in-process save would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal, TypeVar

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionEnv, ActionError, TransactionalAction
from tocsin.actions.registry import get_action
from tocsin.core.config.receipts import truncate_error
from tocsin.core.time.instants import to_rfc3339
from tocsin.runs.retry import TransientPolicy, call_with_retries

log = logging.getLogger("tocsin.alerts")
T = TypeVar("T")
Alerts = list[dict[str, Any]] | Callable[[dict[str, Any]], Any]


def send_action(
    ctx: ActionContext,
    action: Mapping[str, Any],
    policy: TransientPolicy,
    commit: Callable[[TransactionalAction], T] | None = None,
) -> tuple[Literal["sent", "committed"], Any]:
    """Run one alert action (lock conflicts retried in place under ``policy``):
    ``("sent", detail)``, or ``("committed", commit(handler))`` for an action whose effect is a
    write to tocsin's database when the caller commits it with its receipt. Raises the action's
    error."""
    handler = get_action(str(action.get("type")))
    if isinstance(handler, TransactionalAction):
        if commit is not None:
            return "committed", commit(handler)
        return "sent", call_with_retries(partial(_own_tx, handler, ctx, action), policy)
    return "sent", call_with_retries(partial(handler.execute, ctx, action), policy)


def _own_tx(handler: TransactionalAction, ctx: ActionContext, action: Mapping[str, Any]) -> str:
    with ctx.env.store.begin() as tx:
        return handler.execute_in(tx, ctx, action)


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedRun:
    """A run that failed for good, as its alert sees it."""

    kind: str  # workflow | lane
    view: dict[str, Any]  # the run's public view (what a callable receives)
    run_id: str
    error: str
    workflow_id: str | None = None
    schedule_id: str | None = None
    scheduled_for: datetime | None = None


def alert_failed_run(
    alerts: Alerts | None,
    failed: FailedRun,
    *,
    env: ActionEnv | None,
    now: datetime,
    policy: TransientPolicy | None = None,
) -> dict[str, Any] | None:
    """Run ``alerts`` for ``failed`` (module docstring); the outcome to record on the run:
    ``{"status": "sent" | "failed", "at", "results": [{"id", "type", "ok", "detail"}]}`` (a
    callable: one result of type ``callable``); None without alerts. Never raises."""
    if not alerts:
        return None
    if callable(alerts):
        results = [_call(alerts, failed)]
    else:
        results = [_send(a, i, failed, env, now, policy) for i, a in enumerate(alerts, 1)]
    ok = all(r["ok"] for r in results)
    return {"status": "sent" if ok else "failed", "at": to_rfc3339(now), "results": results}


def _call(fn: Callable[[dict[str, Any]], Any], failed: FailedRun) -> dict[str, Any]:
    try:
        fn(dict(failed.view))
    except Exception as exc:
        text = truncate_error(messages.alert_callable_failed(_text(exc)))
        log.warning("on_failure of %s run %s: %s", failed.kind, failed.run_id, text)
        return {"id": "callable", "type": "callable", "ok": False, "detail": text}
    return {"id": "callable", "type": "callable", "ok": True, "detail": None}


def _send(
    action: Mapping[str, Any],
    position: int,
    failed: FailedRun,
    env: ActionEnv | None,
    now: datetime,
    policy: TransientPolicy | None,
) -> dict[str, Any]:
    action_id = str(action.get("id") or f"on-failure-{position}")
    kind = str(action.get("type"))
    try:
        if env is None:
            raise ActionError(messages.ALERT_NO_ACTIONS_HERE)
        ctx = ActionContext(
            env=env,
            run={
                "id": failed.run_id,
                "scheduled_for": failed.scheduled_for,
                "workflow_id": failed.workflow_id,
                "schedule_id": failed.schedule_id,
            },
            table={},
            trigger={"id": failed.schedule_id or failed.workflow_id},
            action_id=action_id,
            row=None,
            now=now,
            error=failed.error,
            names={"schedule.id": failed.schedule_id, "workflow.id": failed.workflow_id},
        )
        _, detail = send_action(ctx, action, policy or TransientPolicy())
    except Exception as exc:
        text = truncate_error(messages.alert_action_failed(action_id, _text(exc)))
        log.warning("on_failure of %s run %s: %s", failed.kind, failed.run_id, text)
        return {"id": action_id, "type": kind, "ok": False, "detail": text}
    return {"id": action_id, "type": kind, "ok": True, "detail": detail}


def alerts_view(alerts: Any) -> Any:
    """An ``on_failure`` as callers see it: its actions, or ``{"callable": "module.name"}``."""
    if alerts is None or isinstance(alerts, list):
        return alerts
    name = getattr(alerts, "__qualname__", type(alerts).__name__)
    return {"callable": f"{getattr(alerts, '__module__', '')}.{name}"}


def _text(exc: BaseException) -> str:
    if isinstance(exc, ActionError):
        return exc.detail
    return str(exc) or type(exc).__name__


__all__ = ["Alerts", "FailedRun", "alert_failed_run", "alerts_view", "send_action"]
