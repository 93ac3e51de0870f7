"""The one shape every action has (SPEC §10): an ``Action`` and what it is given.

An action's ``execute(ctx, config)`` does its effect and returns a short detail for the
receipt, or raises :class:`ActionError` (or :class:`tocsin.errors.TransientStoreError` for a lock
conflict, which the worker retries in place, SPEC §9.5). Actions never import the facade: record
writes go through the :class:`RecordWriter` port the service passes in, so row events, validation
and the approval gate apply exactly as for a user's write.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import httpx

from tocsin import messages
from tocsin.core.config.exposure import SAVED_BY
from tocsin.core.config.templates import RenderTooLarge, TemplateContext, render
from tocsin.store.tx import Store, Tx

CommandFn = Callable[[dict[str, Any]], Any]
"""A registered command: called with its rendered inputs; returns a JSON-able result."""

Resolver = Callable[[str], list[str]]
"""Host name → its IP addresses (the outbound guard resolves before connecting)."""


class ActionError(Exception):
    """An action failed. ``permanent=False`` asks the worker to retry it in place (SPEC §9.5)."""

    def __init__(self, detail: str, *, permanent: bool = True) -> None:
        super().__init__(detail)
        self.detail = detail
        self.permanent = permanent

    def __str__(self) -> str:
        return self.detail


class ActionTimeout(ActionError):
    """An outbound action reached its total deadline (``timeout_s``) before it was answered."""


class RecordWriter(Protocol):
    """Record writes with row events and validation: implemented by the facade."""

    def create_record(self, table_id: str, data: dict[str, Any], *, now: datetime) -> str: ...

    def update_record(
        self, table_id: str, record_id: str, data: dict[str, Any], *, now: datetime
    ) -> None: ...

    def delete_record(self, table_id: str, record_id: str, *, now: datetime) -> None: ...


class WorkflowStarter(Protocol):
    """Starts a registered workflow (SPEC §12) in ``tx`` and answers its run id; an unknown
    workflow raises ``LookupError`` (its message says so)."""

    def __call__(self, tx: Tx, workflow_id: str, input: Any, *, now: datetime) -> str: ...


class TargetGate(Protocol):
    """Why a tenant-saved action may no longer reach its target (``start_workflow``'s workflow,
    ``invoke_command``'s command), saved by token ``token_id``; None when it may."""

    def __call__(self, kind: str, target: str, token_id: str, *, now: datetime) -> str | None: ...


@dataclass(slots=True, kw_only=True)
class ActionEnv:
    """What lives as long as the facade: store, ports, registries, outbound HTTP settings."""

    store: Store
    records: RecordWriter
    commands: Mapping[str, CommandFn]
    outbound_allow: tuple[str, ...] = ()
    stale_after_s: float = 300.0
    http_transport: httpx.BaseTransport | None = None
    resolve: Resolver | None = None
    http_timeout_s: float = 10.0
    """Total deadline of an outbound action whose config has no ``timeout_s``."""
    http_timeout_max_s: float = 60.0
    """Cap of every outbound deadline, a config's ``timeout_s`` included."""
    workflows: WorkflowStarter | None = None
    max_rendered_bytes: int | None = None  # the facade passes Settings.max_rendered_bytes
    gate: TargetGate | None = None
    """Asked before a tenant-saved action reaches app code; without one, such an action fails."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionContext:
    """One action of one run: the run, its table, the row snapshot and the clock value."""

    env: ActionEnv
    run: Mapping[str, Any]
    table: Mapping[str, Any]
    trigger: Mapping[str, Any]
    action_id: str
    row: Mapping[str, Any] | None
    now: datetime
    error: str | None = None
    """The error that failed the run, while its ``on_failure`` actions run (``$run.error``)."""
    names: Mapping[str, str | None] | None = None
    """``$schedule.id`` / ``$workflow.id`` of a workflow's or lane's alerts (None elsewhere)."""

    @property
    def recordless(self) -> bool:
        return self.row is None

    @property
    def idempotency_key(self) -> str:
        """Stable across attempts of this run's action: ``tocsin-<run id>-<action id>``."""
        return f"tocsin-{self.run['id']}-{self.action_id}"

    def render(self, value: Any) -> Any:
        """``value`` with ``$row`` / ``$trigger`` / ``$run`` tokens substituted (SPEC §10).

        A value past ``env.max_rendered_bytes`` fails the action (permanently), unbuilt.
        """
        try:
            return render(value, self.templates())
        except RenderTooLarge as exc:
            raise ActionError(exc.detail) from None

    def check_reach(self, config: Mapping[str, Any], kind: str, target: str) -> None:
        """Fail the action (before it does anything) when a tenant saved it and its ``target``
        is no longer within reach: not exposed to tenants, and the saving token no longer
        holds ``schedules:write`` (``tocsin.core.config.exposure``). Facade-saved: always in
        reach."""
        token_id = config.get(SAVED_BY)
        if token_id is None:
            return
        gate = self.env.gate
        problem = (
            gate(kind, target, str(token_id), now=self.now)
            if gate is not None
            else messages.target_refused(kind, target, str(token_id))
        )
        if problem is not None:
            raise ActionError(problem)

    def templates(self) -> TemplateContext:
        return TemplateContext(
            row=self.row,
            record_id=self.run.get("record_id"),
            trigger_id=self.run.get("trigger_id"),
            run_id=self.run.get("id"),
            scheduled_for=self.run.get("scheduled_for"),
            max_bytes=self.env.max_rendered_bytes,
            error=self.error,
            names=self.names,
        )


class Action(Protocol):
    """One action type. ``execute`` returns the receipt detail or raises ``ActionError``."""

    type: str

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str: ...


@runtime_checkable
class TransactionalAction(Action, Protocol):
    """An action whose whole effect is a write to tocsin's own database.

    The worker calls ``execute_in(tx, …)`` inside the transaction that also stores the action's
    receipt (and finishes the run after the last action), so effect and receipt commit together:
    such an action is never repeated after a crash, and a run costs one transaction per action.
    """

    def execute_in(self, tx: Tx, ctx: ActionContext, config: Mapping[str, Any]) -> str: ...


_SEQUENCE = itertools.count()


def sortable_id(now: datetime) -> str:
    """36 hex characters ordered by ``now``, then by this process's write order.

    Feeds list by ``(created_at, id)``; the rows one run writes share ``created_at``, so their ids
    keep the order they were written in.
    """
    micros = int(now.timestamp() * 1_000_000)
    return f"{micros:016x}{next(_SEQUENCE) % 2**32:08x}{uuid.uuid4().hex[:12]}"


def require_str(config: Mapping[str, Any], key: str, action_type: str) -> str:
    """``config[key]`` as a non-empty string, else a permanent ActionError naming it."""
    value = config.get(key)
    if not isinstance(value, str) or not value:
        raise ActionError(messages.action_needs_string(action_type, key))
    return value
