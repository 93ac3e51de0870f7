"""``tocsin.Tocsin`` (DESIGN §4): services built on one ``Core``.

The methods DESIGN §4 and the README document are one-line forwards, each documented here (the
facade is what users read); ``tick`` and ``work``, which span services, are written out. Newer
capabilities are namespaces (``schedules``, ``lanes``, ``execution``), never more forwards. See
``tocsin.service``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, Self

import httpx

from tocsin.actions.base import ActionEnv, CommandFn, Resolver
from tocsin.lanes.definition import Lane
from tocsin.runs.pool import RunPool
from tocsin.service import base
from tocsin.service.auth import AuthService, Principal
from tocsin.service.data import TablesService
from tocsin.service.execution import ExecutionState, RunsService
from tocsin.service.health import HealthService
from tocsin.service.iac import IacService
from tocsin.service.lanes import Lanes
from tocsin.service.schedules import Schedules
from tocsin.service.secrets import SecretsService
from tocsin.service.trigger_fires import Triggers
from tocsin.service.triggers import TenantSaves, TriggerService
from tocsin.service.whynot import DiagnosticsService
from tocsin.service.workflows import WorkflowService
from tocsin.settings import Settings
from tocsin.store import pools
from tocsin.store.tx import Store
from tocsin.workflows.definition import Workflow


class Tocsin:
    """A durable trigger and schedule engine on one database. See DESIGN §4."""

    def __init__(self, store: Store, settings: Settings) -> None:
        core = self._core = base.Core(store, settings)
        self._tables = tables = TablesService(core)
        self._workflows = workflows = WorkflowService(core)
        self._runs = RunsService(core, records=tables, workflows=workflows.start_from_action)
        workflows.alert_env = self._runs.action_env  # failed runs' on_failure actions
        self._triggers = triggers = TriggerService(core)
        self._diagnostics = DiagnosticsService(core)
        self._trigger_fires = Triggers(core)
        self._iac = IacService(core, triggers=triggers)
        self._auth = AuthService(core)
        self._secrets = SecretsService(core)
        self._health = HealthService(core)
        self._lanes = Lanes(store, {}, core.now, settings.stuck_after_s, workflows.owe_sync)
        self._lanes.alert_env = self._runs.action_env
        self._runs.execution.executors["lane"] = self._lanes.execute_claimed  # the one queue's
        self._runs.execution.own = self._lanes.ids
        self._runs.execution.executors["workflow"] = workflows.executor
        self._runs.execution.flows = workflows.claimed
        self._lanes.drain = partial(self._runs.work, actions=False)

    @classmethod
    def open(
        cls,
        url: str | None = None,
        settings: Settings | None = None,
        *,
        workflows: Iterable[Workflow] = (),
        lanes: Iterable[Lane] = (),
    ) -> Self:
        """Open (and migrate to head) the database at ``url`` or ``settings.database_url``, and
        register ``workflows`` and ``lanes``; with either, the declared schedules are synced at
        the first ``tick`` or ``start_workflow`` (registering is enough, SPEC §12)."""
        settings = settings or Settings.from_environ()
        opened = cls(base.open_configured_store(url or settings.database_url, settings), settings)
        opened.register_workflows(workflows)
        opened.lanes.register(lanes)
        return opened

    def close(self) -> None:
        """Release the database connections (the store and its pools)."""
        self._core.close()

    @staticmethod
    def wall_clock() -> datetime:
        """The real clock, read only at the edges (a worker loop without a fixed ``now``)."""
        return base.wall_clock()

    @property
    def store(self) -> Store:
        """The database (every service reads it from the core, so a replacement reaches all)."""
        return self._core.store

    @store.setter
    def store(self, store: Store) -> None:
        self._core.store = store

    @property
    def settings(self) -> Settings:
        """The settings every service reads (from the core, so a replacement reaches all)."""
        return self._core.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._core.settings = settings

    @property
    def workflows(self) -> dict[str, Workflow]:
        """The registered workflows, by id."""
        return self._core.workflows

    @property
    def schedules(self) -> Schedules:
        """Workflow schedules: list, get, pause, resume, create, delete, fires, backfill…"""
        return self._workflows.schedules

    @property
    def triggers(self) -> Triggers:
        """Table triggers one at a time: ``fires`` and ``history`` (fires with skips)."""
        return self._trigger_fires

    @property
    def lanes(self) -> Lanes:
        """Lanes and their run contracts (SPEC §14)."""
        return self._lanes

    @property
    def execution(self) -> ExecutionState:
        """Commands, outbound HTTP and the retry policy of this facade's actions."""
        return self._runs.execution

    def action_env(self) -> ActionEnv:
        """What actions run with: store, record writes, commands, outbound, workflow starts."""
        return self._runs.action_env()

    @base.on_pool(pools.TICKER)
    def tick(
        self, now: datetime | None = None, table_limit: int = 200, record_limit: int = 1000
    ) -> dict[str, int]:
        """One scheduler pass: the table triggers (SPEC §6, sweeps first), then, through the
        one paging loop, every due workflow schedule and pending event (``schedules_fired``,
        §12; 1,000 per transaction) and the due scheduled lane runs (``lanes_fired``)."""
        at = base.edge_now(now)
        passes = [*self._workflows.tick_passes(), self._lanes.tick_pass()]
        return self._tables.tick(at, table_limit, record_limit, passes=passes)

    @base.on_pool(pools.WORKER)
    def work(
        self,
        now: datetime | None = None,
        limit: int | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        clock: Callable[[], datetime] | None = None,
        pool: RunPool | None = None,
    ) -> int:
        """Approved staged changes and the one queue's runs (table runs, lane attempts and
        workflow runs, the scopes in turn) through the one worker: at most ``limit`` (with
        ``pool``: claims until ``limit`` runs were claimed, each claim whole); returns how many
        ran (with ``pool``: started). A given ``now`` stamps the pass; else ``clock``
        (default: the real one) is read before each claim."""
        return self._runs.work(now, limit, should_stop=should_stop, clock=clock, pool=pool)

    # --- tables, records, triggers config, preview, runs listing (TablesService) -----------------
    def create_table(
        self,
        scope: str,
        scope_id: str,
        name: str,
        columns: Mapping[str, str],
        *,
        requires_approval: bool = False,
        scp_rules: list[Any] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Create a live table with typed columns in a scope (SPEC §1–§2)."""
        return self._tables.create_table(
            scope,
            scope_id,
            name,
            columns,
            requires_approval=requires_approval,
            scp_rules=scp_rules,
            now=now,
        )

    def get_table(self, table_id: str, *, include_trashed: bool = True) -> dict[str, Any]:
        """A table (trashed ones carry ``trashed: true``); 404 when missing."""
        return self._tables.get_table(table_id, include_trashed=include_trashed)

    def trash_table(self, table_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Trash a table: its schedules fall silent, its writes answer 404 (SPEC §2)."""
        return self._tables.trash_table(table_id, now)

    def restore_table(self, table_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Restore a trashed table."""
        return self._tables.restore_table(table_id, now)

    def set_scp_rules(
        self, table_id: str, rules: list[Any] | None, now: datetime | None = None
    ) -> dict[str, Any]:
        """Replace the channel SCP rules; 400 while the table has triggers (SPEC §2)."""
        return self._tables.set_scp_rules(table_id, rules, now)

    def insert_records(
        self, table_id: str, rows: list[Mapping[str, Any]], now: datetime | None = None
    ) -> list[str]:
        """Insert live records (all validated first); each emits ``created``. Returns the ids."""
        return self._tables.insert_records(table_id, rows, now)

    def insert_record(
        self, table_id: str, data: Mapping[str, Any], now: datetime | None = None
    ) -> dict[str, Any]:
        """Insert one record and return its dict (the HTTP ``POST …/records``), with
        ``warnings``: one entry per datetime cell whose offset the naive-UTC rule ignores."""
        return self._tables.insert_record(table_id, data, now)

    def update_record(
        self, table_id: str, record_id: str, data: Mapping[str, Any], now: datetime | None = None
    ) -> dict[str, Any]:
        """Partial update: only the given columns change; emits ``updated``. The record comes
        back with ``warnings`` (datetime offsets ignored, as for ``insert_record``)."""
        return self._tables.update_record(table_id, record_id, data, now)

    def trash_record(
        self, table_id: str, record_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Trash a record; emits ``deleted`` (a record already trashed is returned as is)."""
        return self._tables.trash_record(table_id, record_id, now)

    def restore_record(
        self, table_id: str, record_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Restore a trashed record; emits ``restored`` (a live record is returned as is)."""
        return self._tables.restore_record(table_id, record_id, now)

    def list_records(self, table_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """Live records oldest first: ``{"items", "total", "skip", "limit"}``."""
        return self._tables.list_records(table_id, skip, limit)

    def get_record(self, table_id: str, record_id: str) -> dict[str, Any]:
        """One live record; 404 when missing or trashed."""
        return self._tables.get_record(table_id, record_id)

    def set_triggers(
        self, table_id: str, triggers: object, now: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Full replace of the triggers config; returns it normalized, with every id (§3–§5.2).
        Trusted: a tenant route saves through :meth:`as_tenant`."""
        return self._triggers.set_triggers(table_id, triggers, now)

    def pause_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Pause a schedule trigger (idempotent): the tick fires nothing for it until
        :meth:`resume_trigger`; a triggers config save keeps it paused. 404 unknown table or
        trigger, 409 a row-event trigger. Returns its pause view (``engine.pause``)."""
        return self._tables.pause_trigger(table_id, trigger_id, now)

    def resume_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Resume a paused schedule trigger from ``now``, with no backlog (idempotent)."""
        return self._tables.resume_trigger(table_id, trigger_id, now)

    def get_triggers(self, table_id: str) -> list[dict[str, Any]]:
        """The stored triggers config (``[]`` when none)."""
        return self._triggers.get_triggers(table_id)

    @base.on_pool(pools.TICKER)
    def tick_backlog(self, now: datetime | None = None) -> int:
        """How many tables with due work no tick at ``now`` has reached yet (the embedded
        ticker keeps ticking pages while this is above 0 and its period allows)."""
        return self._tables.tick_backlog(now)

    def preview(
        self,
        table_id: str,
        now: datetime | None = None,
        record_limit: int = 1000,
        *,
        next_due: bool = False,
    ) -> dict[str, Any]:
        """The schedule preview of a live table (SPEC §7); read-only. ``next_due=True`` adds
        each clock trigger's ``next_due_at`` (Studio's "next fire")."""
        return self._tables.preview(table_id, now, record_limit, next_due=next_due)

    def list_runs(
        self,
        table_id: str,
        status: str | None = None,
        skip: int = 0,
        limit: int = 50,
        now: datetime | None = None,
        *,
        trigger_id: str | None = None,
        record_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """A table's runs, newest first; ``status`` may be ``stuck`` (a filter, SPEC §8);
        ``trigger_id``, ``record_id`` and the creation window ``since <= created_at < until``
        (naive instants read as UTC) narrow it further."""
        return self._tables.list_runs(
            table_id,
            status,
            skip,
            limit,
            now,
            trigger_id=trigger_id,
            record_id=record_id,
            since=since,
            until=until,
        )

    def get_run(self, table_id: str, run_id: str) -> dict[str, Any]:
        """One run of this table; 404 for an unknown run or another table's."""
        return self._tables.get_run(table_id, run_id)

    # --- one trigger at a time, a scope's tables (TriggerService) --------------------------------
    def list_tables(
        self, scope: str | None = None, scope_id: str | None = None, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """Live tables, oldest first, of one scope when given (every scope's otherwise):
        ``{"items", "total", "skip", "limit"}``."""
        return self._triggers.list_tables(scope, scope_id, skip, limit)

    def get_trigger(self, table_id: str, trigger_id: str) -> dict[str, Any]:
        """One trigger of the stored config, with its id and its actions' ids."""
        return self._triggers.get_trigger(table_id, trigger_id)

    def patch_trigger(
        self, table_id: str, trigger_id: str, patch: object, now: datetime | None = None
    ) -> dict[str, Any]:
        """Merge ``patch`` (RFC 7396) into one trigger and save the config; returns the trigger,
        normalized. The id stays; ``patch`` may repeat it but never change it."""
        return self._triggers.patch_trigger(table_id, trigger_id, patch, now)

    def as_tenant(self, principal: Principal) -> TenantSaves:
        """The config saves of a tenant route, checked against its token (SPEC §15)."""
        return TenantSaves(self._triggers, self._iac, principal)

    def delete_trigger(self, table_id: str, trigger_id: str, now: datetime | None = None) -> None:
        """Remove one trigger from the config: it is retired (state and ledger kept, SPEC §5.2),
        and saving its id again revives it."""
        self._triggers.delete_trigger(table_id, trigger_id, now)

    # --- why (not): skips, next fires, the dry run, run-now (DiagnosticsService) -----------------
    def skips(
        self, table_id: str, trigger_id: str, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """A table trigger's skipped occurrences as ranges, newest first."""
        return self._diagnostics.skips(table_id, trigger_id, skip, limit)

    def next_fires(
        self, table_id: str, trigger_id: str, n: int = 10, now: datetime | None = None
    ) -> dict[str, Any]:
        """The next ``n`` instants a clock trigger fires at (UTC and its zone)."""
        return self._diagnostics.next_fires(table_id, trigger_id, n, now)

    def due(self, at: datetime | None = None, record_limit: int = 1000) -> dict[str, Any]:
        """The global dry run: what a tick at ``at`` fires, and why not for the rest (read-only;
        ``at`` may be in the future); scheduled lanes included."""
        return self._diagnostics.due(at, record_limit, lanes=self._lanes.registered())

    def run_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """One manual run of a trigger now (never consumes or blocks a scheduled occurrence)."""
        return self._diagnostics.run_trigger(table_id, trigger_id, now)

    # --- executing table runs, retry, requeue, staged changes, feed (RunsService) ----------------
    def register_command(self, name: str, fn: CommandFn, *, tenants: bool = False) -> None:
        """Make ``fn(inputs) -> JSON-able`` callable by ``invoke_command`` actions as ``name``.
        ``tenants=True`` exposes it to tenants: a tenant token may then save an action calling
        it without the ``schedules:write`` permission (``core.exposure``)."""
        self._runs.register_command(name, fn, tenants=tenants)

    def configure_outbound(
        self, *, transport: httpx.BaseTransport | None = None, resolve: Resolver | None = None
    ) -> None:
        """Inject an httpx transport and/or a host resolver (tests; proxies)."""
        self._runs.configure_outbound(transport=transport, resolve=resolve)

    def configure_retries(
        self, *, sleep: Callable[[float], None], jitter: Callable[[float, float], float]
    ) -> None:
        """Inject the backoff's sleep and jitter functions (tests never wait)."""
        self._runs.configure_retries(sleep=sleep, jitter=jitter)

    def retry_run(self, table_id: str, run_id: str, now: datetime | None = None) -> dict[str, Any]:
        """SPEC §9.4: reset a failed / pending / stale running run to pending."""
        return self._runs.retry_run(table_id, run_id, now)

    def requeue(
        self,
        now: datetime | None = None,
        table_id: str | None = None,
        status: str | None = None,
        older_than_s: float | None = None,
    ) -> dict[str, int]:
        """SPEC §9.7 operator requeue: ``{"pending", "running", "staged_changes", "requeued"}``.

        ``status`` pending (lost deliveries) or running (dead workers), both when omitted;
        ``older_than_s`` defaults to the stale window (``stuck_after_s``)."""
        return self._runs.requeue(now, table_id, status, older_than_s)

    def run_counts(self, now: datetime | None = None) -> dict[str, int]:
        """Runs per stored status across every table, plus the SPEC §8 ``stuck`` count."""
        return self._runs.run_counts(now)

    def messages(self, chatroom_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """notify's feed of one chatroom, newest first: ``{"items", "total", "skip", "limit"}``."""
        return self._runs.messages(chatroom_id, skip, limit)

    def list_staged_changes(
        self, table_id: str, status: str | None = None, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """A table's staged changes (SPEC §9.6): ``{"items", "total", "skip", "limit"}``."""
        return self._runs.list_staged_changes(table_id, status, skip, limit)

    def approve_change(
        self, table_id: str, change_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """``staged → approved``; a worker then applies it (``work``)."""
        return self._runs.approve_change(table_id, change_id, now)

    def reject_change(
        self, table_id: str, change_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """``staged → rejected``; nothing is written."""
        return self._runs.reject_change(table_id, change_id, now)

    # --- workflows, schedules, workflow runs (WorkflowService) -----------------------------------
    def register_workflows(self, workflows: Iterable[Workflow]) -> None:
        """Add committed workflows to this facade's registry (a duplicate id raises)."""
        self._workflows.register_workflows(workflows)

    def list_workflows(self) -> list[dict[str, Any]]:
        """The registered workflows, each with its declared schedules (SPEC §12)."""
        return self._workflows.list_workflows()

    def get_workflow(self, workflow_id: str) -> dict[str, Any]:
        """One registered workflow by id; 404 when none is registered under it."""
        return self._workflows.get_workflow(workflow_id)

    def sync_schedules(self, now: datetime | None = None) -> dict[str, list[str]]:
        """Declared schedules → rows: ``{"created", "rescheduled", "patched", "deleted",
        "unchanged"}`` (SPEC §12). What was registered is synced: nothing is owed any more."""
        return self._workflows.sync_schedules(now)

    def fire_schedules(self, now: datetime | None = None, limit: int = 1000) -> int:
        """Only the schedule half of ``tick``: fire due workflow schedules (up to ``limit``; with
        ``drain``, every due one, ``limit`` rows per transaction); returns the fires. The
        declared schedules are synced first when that is owed."""
        return self._workflows.fire_schedules(now, limit)

    def start_workflow(
        self,
        workflow_id: str,
        input: Any = None,
        *,
        now: datetime | None = None,
        wait: bool = True,
        initial_state: Mapping[str, Any] | None = None,
        request_context: Mapping[str, Any] | None = None,
        check_input: bool = False,
    ) -> dict[str, Any]:
        """Start a registered workflow; ``wait=True`` runs it now and returns the finished run
        (``suspended`` when a step suspended it), ``wait=False`` returns it ``pending``.
        ``check_input=True``: an input the workflow's model refuses is a ``ValidationError``
        and nothing is written (the HTTP route's behaviour)."""
        return self._workflows.start_workflow(
            workflow_id,
            input,
            now=now,
            wait=wait,
            initial_state=initial_state,
            request_context=request_context,
            check_input=check_input,
        )

    def workflow_runs(
        self,
        workflow_id: str | None = None,
        status: str | None = None,
        skip: int = 0,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Runs newest first: ``{"items", "total", "skip", "limit"}``."""
        return self._workflows.workflow_runs(workflow_id, status, skip, limit)

    def get_workflow_run(self, run_id: str) -> dict[str, Any]:
        """One workflow run with its steps; 404 for an unknown id."""
        return self._workflows.get_workflow_run(run_id)

    def get_workflow_runs(self, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The runs of ``run_ids`` that exist, by id (unknown ids are left out)."""
        return self._workflows.get_workflow_runs(run_ids)

    def cancel_workflow_run(self, run_id: str, now: datetime | None = None) -> dict[str, Any]:
        """pending / running / suspended → canceled (a running step finishes; nothing after)."""
        return self._workflows.cancel_workflow_run(run_id, now)

    def resume_workflow_run(
        self, run_id: str, data: Any = None, now: datetime | None = None, *, wait: bool = True
    ) -> dict[str, Any]:
        """suspended → pending with ``data`` as the suspended step's ``ctx.resume_data``."""
        return self._workflows.resume_workflow_run(run_id, data, now, wait=wait)

    def retry_workflow_run(
        self, run_id: str, now: datetime | None = None, *, wait: bool = True
    ) -> dict[str, Any]:
        """failed / canceled → pending; steps that succeeded are not executed again."""
        return self._workflows.retry_workflow_run(run_id, now, wait=wait)

    # --- export / plan / apply (IacService) ------------------------------------------------------
    def export(
        self, scope: str, scope_id: str, tables: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The scope's triggers as documents (normalized, canonical key order); only the named
        tables when ``tables`` is given. ``iac.dumps`` turns them into JSON Lines."""
        return self._iac.export(scope, scope_id, tables)

    def export_schedules(self, workflows: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The imperative workflow schedules as documents (normalized, canonical key order):
        of the named workflows only when ``workflows`` is given. Declared schedules belong to
        code and are left out. ``iac.dumps`` turns them into JSON Lines."""
        return self._iac.export_schedules(workflows)

    def plan(
        self, scope: str | None, scope_id: str | None, documents: object, *, schedules: bool = True
    ) -> list[dict[str, Any]]:
        """Per trigger of every table the documents name: ``{"table", "trigger_id", "name",
        "action": create|update|delete|noop|invalid, "changes"}`` (adopted triggers carry
        ``"adopted": true``; an ``invalid`` one, a trigger apply would refuse, carries
        ``"detail"``: the text ``PUT …/triggers`` answers, its table and trigger named); then
        per imperative schedule of every workflow the schedule documents name: ``{"workflow",
        "schedule_id", "action", "changes"}`` (``"adopted"``, ``"warnings"`` when any; an
        invalid schedule document is a 400, as at apply). ``schedules=False`` refuses schedule
        documents (the HTTP routes of one scope). Reads only."""
        return self._iac.plan(scope, scope_id, documents, schedules=schedules)

    def apply(
        self,
        scope: str | None,
        scope_id: str | None,
        documents: object,
        now: datetime | None = None,
        *,
        schedules: bool = True,
    ) -> list[dict[str, Any]]:
        """Carry out the plan of ``documents`` and return it (created triggers and schedules
        with the ids they were saved under). Tables whose plan is all noop are not written.
        Every document is checked before anything is written. Trusted: a tenant route applies
        through :meth:`as_tenant`."""
        return self._iac.apply(scope, scope_id, documents, now, schedules=schedules)

    # --- tokens and roles (AuthService) ----------------------------------------------------------
    def create_token(
        self,
        *,
        scope: str | None = None,
        scope_id: str | None = None,
        role: str = "member",
        permissions: Sequence[str] = (),
        now: datetime | None = None,
        expires_at: datetime | None = None,
    ) -> str:
        """Create a token for ``role`` in one scope and/or API-wide ``permissions``, valid until
        ``expires_at`` (None: until revoked); returns the plaintext (shown once)."""
        return self._auth.create_token(
            scope=scope,
            scope_id=scope_id,
            role=role,
            permissions=permissions,
            now=now,
            expires_at=expires_at,
        )

    def verify_token(self, token: str, *, now: datetime | None = None) -> Principal | None:
        """The principal of ``token``, or None when no stored digest matches or the token is
        revoked or expired at ``now`` (default: the wall clock)."""
        return self._auth.verify_token(token, now=now)

    def list_tokens(self) -> list[dict[str, Any]]:
        """Every token's id, scope, role and instants (never a secret or its digest)."""
        return self._auth.list_tokens()

    def revoke_token(self, token_id: str, *, now: datetime | None = None) -> dict[str, Any]:
        """Revoke a token by id from ``now`` on (idempotent); 404 for an unknown id."""
        return self._auth.revoke_token(token_id, now=now)

    def authenticate(self, token: str | None, *, scope: str, scope_id: str) -> Principal:
        """The principal of ``token`` if it speaks for ``scope``/``scope_id`` (any role).

        Raises :class:`Unauthenticated` (401) for a missing, unknown, expired or revoked token
        and :class:`PermissionDenied` (403) for another tenant's scope."""
        return self._auth.authenticate(token, scope=scope, scope_id=scope_id)

    def authorize(self, token: str | None, *, scope: str, scope_id: str, role: str) -> Principal:
        """The principal of ``token`` if it may act as ``role`` in ``scope``/``scope_id``.

        Raises :class:`Unauthenticated` (401) for a missing, unknown, expired or revoked token
        and :class:`PermissionDenied` (403) for another tenant's scope or a lower role."""
        return self._auth.authorize(token, scope=scope, scope_id=scope_id, role=role)

    def authorize_permission(self, token: str | None, *, permission: str) -> Principal:
        """The principal of ``token`` if it carries ``permission``: 401 for a missing, unknown,
        expired or revoked token, 403 for one without the permission."""
        return self._auth.authorize_permission(token, permission=permission)

    # --- webhook signing secrets (SecretsService) ------------------------------------------------
    def rotate_secret(self, scope: str, scope_id: str, now: datetime | None = None) -> str:
        """A new signing secret for the scope, in force at once (the old one stops signing);
        returns it. Also the way to learn a scope's first secret."""
        return self._secrets.rotate_secret(scope, scope_id, now)

    def signing_secret(self, scope: str, scope_id: str) -> str | None:
        """The scope's current signing secret, or None when it has none yet."""
        return self._secrets.signing_secret(scope, scope_id)

    # --- readiness (HealthService) ---------------------------------------------------------------
    def ping(self) -> None:
        """Return when the database answers; raise ``StoreUnavailable`` (503) while it does not,
        and ``StorageFull`` as a 503 while writes fail for lack of space (``Store.ping``)."""
        self._health.ping()


__all__ = ["Tocsin"]
