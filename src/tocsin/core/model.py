"""Typed values the store hands out (SPEC §1, §5.1, §8, §12–§15). Pure.

Each is immutable and built in exactly one place in the store (its row → value function): a
frozen, slotted dataclass, but :class:`Run`, a ``NamedTuple`` (the one claim builds a thousand
at a time: a tuple is made whole, a frozen dataclass field by field); the views build the dicts
the facade and HTTP have always answered from them (``as_dict()`` where that dict is the row's),
so no caller of the facade sees a typed value:

- :class:`Table`: a ``tables`` row (its triggers / SCP configs as stored JSON); built by
  ``store.records.table_value`` (``get_table``, ``list_tables``, ``page_tables``,
  ``lock_table``, ``insert_table``). The facade answers ``service.data.public_table(table)``.
- :class:`Run`: a ``runs`` row, ``status`` a :class:`RunStatus`; built by
  ``store.runs.run_value`` (``get_run``, ``insert_run``, ``store.run_queries.list_runs``,
  ``claim_run``, ``reset_for_retry``), the one claim's (``claim_scoped_runs``) from its returned
  rows by position. Actions still read the run and its table as mappings
  (``ActionContext.run`` / ``.table`` are the ``as_dict()`` of these).
- :class:`TriggerState`: one durable row per schedule trigger id — the scheduler's memory
  (anchor and last consumed window of clock kinds, the date cursor, ``next_due_at``); built by
  ``store.state.state_value``, for typed rows and the tick's raw driver rows alike.
- :class:`RunStatus`: a run's status; :data:`RUN_TRANSITIONS` its allowed moves (the retry
  refusal checks them through :meth:`RunStatus.may_become`)::

      pending → running → done | failed        (retry: failed | pending | stale running → pending)
      running → pending                        (release, requeue, automatic retry)

  ``stuck`` is a filter, not a status: failed, or running for longer than the stale window.

- :class:`DueSchedule`: a workflow schedule as its cron pass claims it (what firing reads);
  built by ``store.schedules.claim_due_schedules``. :class:`WorkflowSchedule`: a whole
  ``workflow_schedules`` row (a ``DueSchedule`` too); built by ``store.schedules.schedule_value``
  (``get_schedule``, ``list_schedules``, the sync's and IaC's reads, the trigger-tree passes).
  :class:`ScheduleFire`: a ``schedule_fires`` row with its run's status
  (``store.schedules.fire_value``); :class:`WorkflowActivity`: what the database holds of one
  workflow id, loaded or not (``store.schedules.known_workflows``).
- :class:`WorkflowRun`: a workflow run (a ``runs`` row of kind ``workflow``) under its own
  field names (:data:`WORKFLOW_RUN_FIELDS`); built by ``store.workflow_runs.workflow_run_value``
  (``get_run``, ``runs_by_id``, ``list_runs``). The facade answers
  ``workflows.views.public_run(run)``; the one claim hands its executor a :class:`Run`.
- :class:`StoredLane`, :class:`LaneRun`, :class:`LaneAttempt`, :class:`LaneSummary`: a ``lanes``
  row, a ``lane_runs`` row, an attempt (its ``lane_attempts`` row with its queue row's state and
  its run's instants) and a lane's attempt counts (SPEC §14); built by ``store.lanes``
  (``lane_value``, ``lane_run_value``, ``attempt_value``, ``lane_summaries``).
- :class:`TriggerEvent`: an outbox event a compound trigger may listen to (SPEC §13)
  (``store.trigger_events.event_value``); :class:`TriggerFire`: a table trigger's fire, read
  from its scheduled run (``store.run_queries.list_trigger_fires``).
- :class:`StagedChange`: a change the approval gate holds (SPEC §9.6,
  ``store.approvals.change_value``); :class:`CommandResult` / :class:`CommandSlot`: an
  ``invoke_command`` key's row and what reserving it answers (SPEC §9.5, ``store.commands``);
  :class:`ChatMessage`: ``notify``'s feed (SPEC §10, ``store.chat``); :class:`ApiToken`: a token
  row (SPEC §15, ``store.tokens.token_value``).

The store's skip ranges are the core's own ``core.schedules.skips.SkipRange``
(``store.skips.skip_value``). Records stay dicts.

Left untyped on purpose (bulk paths of the tick): the tick's claimed tables
(``store.claims.claim_candidate_tables``, three columns as dicts) and run inserts
(``store.runs.NewRun`` tuples).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from tocsin.core.schedules.identity import dedup_key


@dataclass(frozen=True, slots=True)
class Table:
    """A user table (SPEC §1): its columns, trigger and SCP configs, and tick bookkeeping."""

    id: str
    scope: str  # chatroom | user
    scope_id: str
    name: str
    columns: Mapping[str, str]  # {"Due": "datetime", ...} in authored order
    triggers: list[dict[str, Any]] | None  # the normalized trigger config, None: no triggers
    scp_rules: list[dict[str, Any]] | None
    requires_approval: bool
    trashed: bool
    next_due_at: datetime | None  # the earliest instant it may have due work (DESIGN §5)
    last_ticked_at: datetime | None  # the tick's rotation cursor
    created_at: datetime
    updated_at: datetime

    def as_dict(self) -> dict[str, Any]:
        """The table dict the facade answers (the JSON values as stored, not copied)."""
        return {name: getattr(self, name) for name in _TABLE_FIELDS}


_TABLE_FIELDS = tuple(f.name for f in fields(Table))  # read once: as_dict runs per run executed


@dataclass(frozen=True, slots=True)
class TriggerState:
    """A schedule trigger's durable state row (SPEC §5.1)."""

    trigger_id: str
    table_id: str
    kind: str  # date_column_reached | interval | daily | cron
    anchor: datetime | None  # clock kinds: windows start here
    last_consumed: datetime | None  # clock kinds: the last window claimed (failed runs count)
    cursor_created_at: datetime | None  # date kind: the last examined record
    cursor_id: str | None
    schedule_hash: str | None  # a different hash means a re-anchoring edit (SPEC §5.2)
    retired: bool  # the trigger was removed; state and ledger are kept
    next_due_at: datetime | None  # the earliest instant it may be due (DESIGN §5)
    updated_at: datetime | None
    paused_at: datetime | None = None  # set while paused: the tick neither plans nor fires it
    # date kind: past pauses ``(from, until)``; an occurrence whose fire instant falls inside one
    # never fires (resume recomputes from ``now``: nothing backlogged)
    pause_windows: tuple[tuple[datetime, datetime], ...] = ()
    # the trigger's current definition in ``trigger_definitions``: what a run it fires freezes
    definition_hash: str | None = None

    @property
    def paused(self) -> bool:
        return self.paused_at is not None

    @property
    def cursor(self) -> tuple[datetime, str] | None:
        """The date cursor ``(created_at, record id)``, None at the start."""
        if self.cursor_created_at is None or self.cursor_id is None:
            return None
        return self.cursor_created_at, self.cursor_id

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class RunStatus(StrEnum):
    """A run's stored status (SPEC §8)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    def may_become(self, other: RunStatus) -> bool:
        """Whether a run in this status may move to ``other``."""
        return other in RUN_TRANSITIONS[self]


class Run(NamedTuple):
    """A table trigger's run (SPEC §8): what it executes (``payload``, the frozen
    ``definition`` of schedule runs), where it is (``status``, ``attempts``) and its receipts.

    Immutable like the dataclasses here, a ``NamedTuple`` because the one claim builds a
    thousand at a time: a frozen dataclass's ``__init__`` sets each of its 28 fields through
    ``object.__setattr__`` (2.5 µs a run on this machine, most of a claimed row's decoding), a
    tuple is made whole (0.3 µs). ``Run._fields`` are its fields, ``run._replace(…)`` a copy
    with some changed."""

    id: str
    table_id: str
    trigger_id: str
    record_id: str | None
    source: str  # created | updated | deleted | restored | schedule
    clock: bool  # a clock schedule run (one active at a time per trigger, SPEC §5.3)
    status: RunStatus
    attempts: int
    error: str | None
    action_results: list[dict[str, Any]]  # the receipts, in action order
    # the row snapshot (SPEC §8); None when not read: a page of runs leaves it out
    payload: dict[str, Any] | None
    definition: dict[str, Any] | None  # the trigger definition it fired with (frozen: schedule)
    identity: str | None
    scheduled_for: datetime | None
    enqueued_at: datetime | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    next_attempt_at: datetime | None  # a pending automatic retry is not claimed before it
    # which executor runs it: ``actions`` (a table trigger's run, all of SPEC §8), else the
    # app's own kind in the one queue (``lane``: a lane attempt, its id the attempt's)
    kind: str = "actions"
    # a workflow run's own columns (kind ``workflow``: ``trigger_id`` is the workflow,
    # ``source`` the trigger word, ``action_results`` the step receipts); None on other kinds
    schedule_id: str | None = None
    input: Any = None
    initial_state: Any = None
    request_context: Any = None
    resume_data: Any = None
    attempt: int | None = None  # the automatic retry's attempt number (SPEC §12)
    # its turn in the one claim (``runs.scope``): its table's tenant ``scope:scope_id`` (a limited
    # trigger's runs: a scope within it), the app's ``app`` or a workflow's ``app/wf:…``
    scope: str = ""

    @property
    def dedup_key(self) -> str | None:
        """The enqueue dedup key of a clock run (SPEC §5.4, ``identity.dedup_key``) of its
        frozen schedule at ``scheduled_for``; None for every other run."""
        if not self.clock or not isinstance(self.definition, Mapping):
            return None
        return dedup_key(self.definition.get("schedule"), self.scheduled_for)

    def as_dict(self) -> dict[str, Any]:
        """The run dict the facade answers (``status`` as its plain string, ``dedup_key``; no
        ``payload`` key when it was not read)."""
        out = {name: getattr(self, name) for name in _RUN_FIELDS}
        if self.payload is None:
            del out["payload"]
        out["status"] = str(self.status)
        out["action_results"] = list(self.action_results)
        out["dedup_key"] = self.dedup_key
        return out


_NOT_IN_RUN_DICT = frozenset(
    (
        "kind",
        "schedule_id",
        "input",
        "initial_state",
        "request_context",
        "resume_data",
        "attempt",
        "scope",
    )
)
_RUN_FIELDS = tuple(name for name in Run._fields if name not in _NOT_IN_RUN_DICT)  # SPEC §8


@dataclass(frozen=True, slots=True)
class WorkflowRun:
    """A workflow run (SPEC §12) as the store reads it: a ``runs`` row of kind ``workflow``
    under a workflow run's field names (``store.workflow_runs.COLUMN_OF``). What executing it
    reads is the one claim's :class:`Run` instead (``workflows.execute.run_stages``)."""

    id: str
    workflow_id: str
    schedule_id: str | None  # the schedule that fired it; None: started by hand
    trigger: str  # scheduled | manual | backfill
    status: str  # pending | running | success | failed | suspended | canceled
    attempts: int  # claims so far (the claim fence)
    input: Any  # the JSON values, decoded
    output: Any
    error: str | None
    steps: list[dict[str, Any]]  # the step receipts, in execution order
    initial_state: Any
    request_context: Any
    suspend_payload: Any  # what a suspended step asked with
    resume_data: Any  # what resuming it gave the suspended step
    scheduled_for: datetime | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    attempt: int | None  # the automatic retry's attempt number (None: stored before it)
    next_attempt_at: datetime | None  # a pending automatic retry is not claimed before it
    alert: dict[str, Any] | None  # the outcome of its ``on_failure``

    def as_dict(self) -> dict[str, Any]:
        """The run as a dict of its fields, in their order (``steps`` a list of its own)."""
        out = {name: getattr(self, name) for name in WORKFLOW_RUN_FIELDS}
        out["steps"] = list(self.steps)
        return out


WORKFLOW_RUN_FIELDS = tuple(f.name for f in fields(WorkflowRun))
"""A workflow run's field names, in order: the columns a workflow run's insert names."""


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """Where a run of any kind stands in the one queue: what an operator's requeue of one run
    reads (``status`` as stored: a lane attempt's final ones are its kind's, ``recorded`` or
    ``failed``)."""

    id: str
    kind: str  # actions | lane | workflow (never owned by a table or lane requeue)
    table_id: str  # '' for the app's own runs
    trigger_id: str  # a table run's trigger; a lane attempt's lane
    status: str
    updated_at: datetime
    clock: bool


RUN_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.PENDING: frozenset({RunStatus.RUNNING, RunStatus.PENDING}),  # claim; retry
    # finish; release / requeue / automatic retry (and retry of a stale running run)
    RunStatus.RUNNING: frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.PENDING}),
    RunStatus.FAILED: frozenset({RunStatus.PENDING}),  # retry
    RunStatus.DONE: frozenset(),
}


def row_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """The run payload of a record: its id and a copy of its cells (SPEC §8 row snapshot)."""
    data = record.get("data")
    return {"id": str(record["id"]), "data": dict(data) if isinstance(data, Mapping) else {}}


@dataclass(frozen=True, slots=True)
class DueSchedule:
    """A workflow schedule as its fire pass reads it (SPEC §12): its timing, policies and the
    payload its runs start with."""

    id: str
    workflow_id: str
    cron: str  # extended dialect (SPEC §13); unused when ``trigger_tree`` is set
    timezone: str
    overlap: str  # skip | allow
    catch_up: str  # latest | none | all
    max_catch_up: int
    input_data: dict[str, Any] | None
    initial_state: dict[str, Any] | None
    request_context: dict[str, Any] | None
    next_fire_at: datetime | None  # None: never fires again
    paused_at: datetime | None  # set while paused: neither the fire pass nor an event fires it
    trigger_tree: dict[str, Any] | None  # a compound trigger's JSON tree (SPEC §13)

    @property
    def paused(self) -> bool:
        return self.paused_at is not None


@dataclass(frozen=True, slots=True)
class WorkflowSchedule(DueSchedule):
    """A workflow schedule row (SPEC §12): declared in code (``wf_…``) or imperative
    (``sch_…``)."""

    source: str  # declared | imperative
    metadata: dict[str, Any] | None
    last_fire_id: str | None
    created_at: datetime
    updated_at: datetime
    latches: dict[str, str] | None  # a compound trigger's latches: leaf path → ISO instant
    evaluated_at: datetime | None  # its time triggers were evaluated up to here

    def as_dict(self) -> dict[str, Any]:
        """The row as a dict, in the stored columns' order (``metadata`` last)."""
        return {name: getattr(self, name) for name in _SCHEDULE_FIELDS}


_SCHEDULE_FIELDS = (
    "id",
    "workflow_id",
    "source",
    "cron",
    "timezone",
    "overlap",
    "catch_up",
    "max_catch_up",
    "input_data",
    "initial_state",
    "request_context",
    "paused_at",
    "next_fire_at",
    "last_fire_id",
    "created_at",
    "updated_at",
    "trigger_tree",
    "latches",
    "evaluated_at",
    "metadata",
)


@dataclass(frozen=True, slots=True)
class WorkflowActivity:
    """A workflow id's stored schedules (ids, in order) and runs (how many, the newest's
    creation)."""

    schedules: tuple[str, ...]
    runs: int
    last_run_at: datetime | None


@dataclass(frozen=True, slots=True)
class ScheduleFire:
    """A workflow schedule's fire (SPEC §12) and its run's status (``pending`` while the run is
    not visible yet; None when the fire failed to publish)."""

    id: str
    schedule_id: str
    workflow_id: str
    scheduled_for: datetime
    fired_at: datetime
    run_id: str | None
    publish_status: str  # published | publish_failed
    error: str | None
    run_status: str | None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIRE_FIELDS}


_FIRE_FIELDS = tuple(f.name for f in fields(ScheduleFire))


@dataclass(frozen=True, slots=True)
class TriggerEvent:
    """An event in the outbox (SPEC §13): written with its cause, consumed by the tick."""

    id: int  # the outbox order
    kind: str  # table_updated | workflow_succeeded | schedule_succeeded | definition_changed
    subject: str  # the table, workflow or schedule id
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class StagedChange:
    """A write a ``requires_approval`` table holds until a moderator decides (SPEC §9.6)."""

    id: str
    table_id: str
    run_id: str | None  # the run whose action staged it
    action_id: str | None
    operation: str  # create | update | delete
    record_id: str | None
    values: dict[str, Any]
    status: str  # staged → approved | rejected; approved → applying → applied | failed
    error: str | None
    decided_at: datetime | None
    applied_at: datetime | None
    created_at: datetime
    updated_at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in CHANGE_FIELDS}


CHANGE_FIELDS = tuple(f.name for f in fields(StagedChange))


@dataclass(frozen=True, slots=True)
class CommandResult:
    """An ``invoke_command`` idempotency key (SPEC §9.5): reserved by the attempt calling the
    command, then succeeded with its result."""

    idempotency_key: str
    command: str
    status: str  # reserved | succeeded
    result: Any  # the command's JSON result once succeeded
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class CommandSlot:
    """What reserving a key answers: ``reserved`` (call the command), ``succeeded`` (its stored
    ``result``: do not call again) or ``busy`` (another attempt holds it)."""

    state: str
    result: Any = None


@dataclass(frozen=True, slots=True)
class TriggerFire:
    """A table trigger's fire: its scheduled run seen as a fire (``id`` and ``run_id`` the
    run's, ``fired_at`` its creation, ``run_status`` its status)."""

    id: str
    table_id: str
    trigger_id: str
    record_id: str | None
    identity: str | None
    scheduled_for: datetime
    fired_at: datetime
    run_id: str
    run_status: str
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TRIGGER_FIRE_FIELDS}


_TRIGGER_FIRE_FIELDS = tuple(f.name for f in fields(TriggerFire))


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A message ``notify`` appended to a chatroom's feed (SPEC §10)."""

    id: str
    chatroom_id: str
    table_id: str | None
    run_id: str | None
    text: str
    created_at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _MESSAGE_FIELDS}


_MESSAGE_FIELDS = tuple(f.name for f in fields(ChatMessage))


@dataclass(frozen=True, slots=True)
class ApiToken:
    """An API token (SPEC §15): its scope, role, API-wide permissions and instants; the digest
    of its secret only where a lookup read it (a listing never does)."""

    id: str
    scope: str  # chatroom | user
    scope_id: str
    role: str  # member | moderator
    permissions: list[str] | None  # API-wide (``schedules:read`` …)
    created_at: datetime
    expires_at: datetime | None  # None: never expires
    revoked_at: datetime | None  # None: not revoked
    token_hash: str | None = None  # None: not read

    def as_dict(self) -> dict[str, Any]:
        """What a listing shows: never the digest."""
        return {name: getattr(self, name) for name in TOKEN_LISTED}


TOKEN_LISTED = tuple(f.name for f in fields(ApiToken) if f.name != "token_hash")


@dataclass(frozen=True, slots=True)
class StoredLane:
    """A lane's row (SPEC §14): its schedule's next instant and pause; the per-lane lock row."""

    id: str
    cron: str | None  # None: a lane without a schedule
    timezone: str
    policy_version: str
    next_fire_at: datetime | None  # the next instant the tick fires
    created_at: datetime
    updated_at: datetime
    paused_at: datetime | None  # set while paused


@dataclass(frozen=True, slots=True)
class LaneRun:
    """A lane's logical run (SPEC §14): its window, and ``admitted`` once it passed the overlap
    and duplicate checks."""

    run_id: str
    lane_id: str
    zone: str
    scheduled_for: datetime
    window_start: datetime
    window_end: datetime
    policy_version: str
    admitted: bool
    attempts: int  # the attempt numbers allocated so far
    state: str  # pending → running → recorded | failed; rejected when not admitted
    decision: str | None  # of the last attempt that asked the source
    handler_status: str | None  # succeeded | failed | running | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class LaneAttempt:
    """A lane attempt (SPEC §14): its contract and outcome, its queue row's state and its run's
    instants."""

    attempt_id: str
    run_id: str
    lane_id: str
    attempt: int
    kind: str  # scheduled | manual | retry
    observed_at: datetime
    decision_status: str | None
    decision_reason: str | None
    contract: dict[str, Any] | None
    handler_status: str | None
    handler_error: str | None
    error: str | None  # it failed before its decision
    created_at: datetime
    alert: dict[str, Any] | None  # the lane's on_failure outcome
    state: str  # pending → running → recorded | failed (its queue row's status)
    next_attempt_at: datetime | None  # an automatic retry waits until then
    updated_at: datetime
    scheduled_for: datetime
    window_start: datetime
    window_end: datetime
    zone: str


@dataclass(frozen=True, slots=True)
class LaneSummary:
    """A lane's attempts: how many, per decision status (attempts without a decision yet left
    out), and the newest one's decision, state and time."""

    attempts: int
    decisions: dict[str, int]
    last_at: datetime | None
    last_decision: str | None
    last_state: str | None


__all__ = [
    "CHANGE_FIELDS",
    "RUN_TRANSITIONS",
    "TOKEN_LISTED",
    "WORKFLOW_RUN_FIELDS",
    "ApiToken",
    "ChatMessage",
    "CommandResult",
    "CommandSlot",
    "DueSchedule",
    "LaneAttempt",
    "LaneRun",
    "LaneSummary",
    "QueueEntry",
    "Run",
    "RunStatus",
    "ScheduleFire",
    "StagedChange",
    "StoredLane",
    "Table",
    "TriggerEvent",
    "TriggerFire",
    "TriggerState",
    "WorkflowActivity",
    "WorkflowRun",
    "WorkflowSchedule",
    "row_payload",
]
