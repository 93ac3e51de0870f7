"""Work, retry, requeue, staged changes, chatroom messages, commands (SPEC §8–§10)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast

import httpx

from tocsin import messages as texts
from tocsin.actions.base import ActionEnv, CommandFn, Resolver, WorkflowStarter
from tocsin.engine.sweeps import requeue_staged_changes
from tocsin.errors import NotFound, ValidationError
from tocsin.runs.approvals import apply_approved, decide
from tocsin.runs.clock import pass_clock
from tocsin.runs.drain import drain, slot_share
from tocsin.runs.pool import RunPool
from tocsin.runs.retry import TransientPolicy, retry_run
from tocsin.runs.worker import KindExecutor, Worker
from tocsin.service.base import Core, Service
from tocsin.service.data import TablesService
from tocsin.service.exposure import RunGate
from tocsin.store.approvals import CHANGE_TRANSITIONS, list_changes
from tocsin.store.chat import list_messages
from tocsin.store.records import get_table
from tocsin.store.run_queries import count_runs, count_stuck_runs
from tocsin.store.runs import RunLimits, requeue_runs

REQUEUE_STATUSES = ("pending", "running")


class _DataSide(Protocol):
    """The record writes of ``TablesService`` that actions reach through :class:`FacadeRecords`."""

    def insert_records(
        self, table_id: str, rows: list[dict[str, Any]], *, now: datetime
    ) -> Any: ...

    def update_record(
        self, table_id: str, record_id: str, data: dict[str, Any], *, now: datetime
    ) -> Any: ...

    def trash_record(self, table_id: str, record_id: str, *, now: datetime) -> Any: ...


@dataclass(slots=True)
class FacadeRecords:
    """``RecordWriter`` over the tables service: row events, validation and triggers apply as
    usual."""

    facade: _DataSide

    def create_record(self, table_id: str, data: dict[str, Any], *, now: datetime) -> str:
        created = self.facade.insert_records(table_id, [data], now=now)
        first = created[0] if isinstance(created, list | tuple) and created else created
        return str(first["id"] if isinstance(first, dict) else first)

    def update_record(
        self, table_id: str, record_id: str, data: dict[str, Any], *, now: datetime
    ) -> None:
        self.facade.update_record(table_id, record_id, data, now=now)

    def delete_record(self, table_id: str, record_id: str, *, now: datetime) -> None:
        self.facade.trash_record(table_id, record_id, now=now)


@dataclass(slots=True)
class ExecutionState:
    """Per-facade execution configuration (commands, outbound HTTP, retry policy)."""

    commands: dict[str, CommandFn] = field(default_factory=dict)
    transport: httpx.BaseTransport | None = None
    resolve: Resolver | None = None
    workflows: WorkflowStarter | None = None
    policy: TransientPolicy = field(default_factory=TransientPolicy)
    # the executors of the app's own kinds of run in the one queue (``lane``), and the
    # ``trigger_id`` of those this process executes (its registered lanes)
    executors: dict[str, KindExecutor] = field(default_factory=dict)
    own: Callable[[], tuple[str, ...]] = tuple
    # the registered workflows whose runs this process's worker claims, and their limits
    flows: Callable[[], tuple[tuple[str, ...], RunLimits | None]] = lambda: ((), None)


class RunsService(Service):
    """Executing table runs and everything around them: retry, requeue, staged changes, the
    chatroom feed, commands and outbound configuration. Record actions write through
    ``records`` (the tables service); ``start_workflow`` actions go to ``workflows``."""

    def __init__(self, core: Core, *, records: TablesService, workflows: WorkflowStarter) -> None:
        super().__init__(core)
        self._records = cast(_DataSide, records)
        self._execution = ExecutionState(workflows=workflows)

    @property
    def execution(self) -> ExecutionState:
        return self._execution

    # ── configuration ──────────────────────────────────────────────────────────────────────
    def register_command(self, name: str, fn: CommandFn, *, tenants: bool = False) -> None:
        """Make ``fn(inputs) -> JSON-able`` callable by ``invoke_command`` actions as ``name``.
        ``tenants=True`` exposes it to tenants: a tenant token may then save an action calling
        it without the ``schedules:write`` permission (``core.config.exposure``)."""
        if not name:
            raise ValidationError(texts.COMMAND_NAME_EMPTY)
        self.execution.commands[name] = fn
        if tenants:
            self.core.tenant_commands.add(name)
        else:
            self.core.tenant_commands.discard(name)

    def configure_outbound(
        self, *, transport: httpx.BaseTransport | None = None, resolve: Resolver | None = None
    ) -> None:
        """Inject an httpx transport and/or a host resolver (tests; proxies)."""
        self.execution.transport = transport
        self.execution.resolve = resolve

    def configure_retries(
        self, *, sleep: Callable[[float], None], jitter: Callable[[float, float], float]
    ) -> None:
        """Inject the backoff's sleep and jitter functions (tests never wait)."""
        self.execution.policy = TransientPolicy(sleep=sleep, jitter=jitter)

    def action_env(self) -> ActionEnv:
        state = self.execution
        return ActionEnv(
            store=self.store,
            records=FacadeRecords(self._records),
            commands=state.commands,
            outbound_allow=self.settings.outbound_allow,
            stale_after_s=self.settings.stuck_after_s,
            http_transport=state.transport,
            http_timeout_s=min(self.settings.action_timeout_s, self.settings.action_timeout_max_s),
            http_timeout_max_s=self.settings.action_timeout_max_s,
            resolve=state.resolve,
            workflows=state.workflows,
            max_rendered_bytes=self.settings.max_rendered_bytes,
            gate=RunGate(self.core),
        )

    # ── execution ──────────────────────────────────────────────────────────────────────────
    def work(
        self,
        now: datetime | None = None,
        limit: int | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        clock: Callable[[], datetime] | None = None,
        pool: RunPool | None = None,
        actions: bool = True,
    ) -> int:
        """Apply approved staged changes, then execute pending runs of every kind (table runs,
        lane attempts, workflow runs); returns runs executed. ``actions`` false: lane attempts
        only, no staged change.

        A given ``now`` stamps the whole pass. Otherwise ``clock`` (default: the real clock) is
        read again before each claim and each action, so runs of a long pass stay fresh.

        With ``pool`` (``tocsin worker``), runs are claimed as its slots free up and execute on
        its threads side by side; the call returns once it started them (how many it started),
        without waiting for them to finish.
        """
        read = None if now is not None else (clock or self.wall_clock)
        at = self._now(now) if read is None else read()
        env = self.action_env()
        if actions:
            apply_approved(env, now=at, policy=self.execution.policy, limit=limit)
        flows, limits = self.execution.flows() if actions else ((), None)
        worker = Worker(
            env=env,
            policy=self.execution.policy,
            clock=read,
            backoff_max_s=self.settings.db_backoff_max_s,
            stamps=pass_clock(at) if read is None else None,  # the pass's now, plus elapsed
            executors=self.execution.executors,
            own=self.execution.own(),
            workflows=flows,
            limits=limits,
            actions=actions,
            per_slot=self.settings.run_claim_chunk or slot_share(pool.size if pool else 1),
            look_s=self.settings.slot_look_s,
        )
        if should_stop is not None:
            worker.should_stop = should_stop
        return drain(worker, now=at, limit=limit, pool=pool)

    def retry_run(self, table_id: str, run_id: str, now: datetime | None = None) -> dict[str, Any]:
        """SPEC §9.4: reset a failed / pending / stale running run to pending."""
        return retry_run(
            self.store,
            table_id=table_id,
            run_id=run_id,
            now=self._now(now),
            stuck_after_s=self.settings.stuck_after_s,
        )

    def requeue(
        self,
        now: datetime | None = None,
        table_id: str | None = None,
        status: str | None = None,
        older_than_s: float | None = None,
    ) -> dict[str, int]:
        """SPEC §9.7 operator requeue: ``{"pending", "running", "staged_changes", "requeued"}``.

        ``status`` pending (lost deliveries) or running (dead workers), both when omitted;
        ``older_than_s`` defaults to the stale window (``stuck_after_s``).
        """
        if status is not None and status not in REQUEUE_STATUSES:
            raise ValidationError(texts.requeue_status_invalid(REQUEUE_STATUSES))
        age = self.settings.stuck_after_s if older_than_s is None else older_than_s
        if age < 0:
            raise ValidationError(texts.OLDER_THAN_NEGATIVE)
        at = self._now(now)
        counts = {"pending": 0, "running": 0, "staged_changes": 0}
        with self.store.begin() as tx:
            for which in [status] if status else REQUEUE_STATUSES:
                moved = requeue_runs(tx, now=at, status=which, older_than_s=age, table_id=table_id)
                counts[which] = sum(moved.values())
            if table_id is None:
                counts["staged_changes"] = requeue_staged_changes(tx, now=at, stale_after_s=age)
        return {**counts, "requeued": counts["pending"] + counts["running"]}

    # ── chatroom feed ──────────────────────────────────────────────────────────────────────
    def run_counts(self, now: datetime | None = None) -> dict[str, int]:
        """Runs per stored status across every table, plus the SPEC §8 ``stuck`` count."""
        at = self._now(now)
        with self.store.read() as tx:
            counts = {s: count_runs(tx, status=s) for s in ("pending", "running", "done", "failed")}
            counts["stuck"] = count_stuck_runs(
                tx, now=at, stuck_after_s=self.settings.stuck_after_s
            )
        return counts

    def messages(self, chatroom_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """notify's feed of one chatroom, newest first: ``{"items", "total", "skip", "limit"}``."""
        _check_page(skip, limit)
        with self.store.read() as tx:
            messages, total = list_messages(tx, chatroom_id=chatroom_id, skip=skip, limit=limit)
        items = [message.as_dict() for message in messages]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    # ── approval gate ──────────────────────────────────────────────────────────────────────
    def list_staged_changes(
        self, table_id: str, status: str | None = None, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """A table's staged changes (SPEC §9.6): ``{"items", "total", "skip", "limit"}``."""
        _check_page(skip, limit)
        if status is not None and status not in CHANGE_TRANSITIONS:
            raise ValidationError(texts.change_status_invalid(CHANGE_TRANSITIONS))
        with self.store.read() as tx:
            if get_table(tx, table_id=table_id) is None:
                raise NotFound(texts.TABLE_NOT_FOUND)
            changes, total = list_changes(
                tx, table_id=table_id, status=status, skip=skip, limit=limit
            )
        items = [change.as_dict() for change in changes]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    def approve_change(
        self, table_id: str, change_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """``staged → approved``; a worker then applies it (``work``)."""
        return decide(
            self.store,
            table_id=table_id,
            change_id=change_id,
            status="approved",
            now=self._now(now),
        )

    def reject_change(
        self, table_id: str, change_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """``staged → rejected``; nothing is written."""
        return decide(
            self.store,
            table_id=table_id,
            change_id=change_id,
            status="rejected",
            now=self._now(now),
        )


MAX_PAGE = 1000


def _check_page(skip: int, limit: int) -> None:
    if skip < 0 or not 1 <= limit <= MAX_PAGE:
        raise ValidationError(texts.page_bounds_invalid(MAX_PAGE))
