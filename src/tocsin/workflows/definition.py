"""Defining workflows in code: ``step``, ``workflow``, ``Schedule`` (SPEC §12).

A workflow is a chain of *stages* built with ``.then(step)`` and ``.parallel([a, b])`` and frozen
by ``.commit()``. Everything is checked when the workflow is defined, never when it first fires:

- every ``Schedule.cron`` parses in the extended dialect (SPEC §13); a bad expression raises
  :class:`~tocsin.errors.ConfigError` with the cron text of SPEC §4.4 (``cron schedule invalid: …``)
- a ``timezone`` must be an IANA name; without one the host's local zone is used and a
  ``UserWarning`` recommends an explicit zone
- schedule ids are ``wf_<workflowId>`` (one schedule) or ``wf_<workflowId>__<scheduleId>``
  (a list, each entry with its own unique ``id``); a duplicate raises ``ConfigError``
- step ids are unique within a workflow

Pure: no I/O, no clock. Executing a committed workflow is :mod:`tocsin.workflows.execute`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from tocsin import messages
from tocsin.core.config.run_policies import Alerts, checked_alerts, checked_retry, checked_timeout
from tocsin.core.schedules.tree import (
    Compound,
    Cron,
    Event,
    Node,
    and_of_times,
    check_shape,
    leaves,
    to_json,
    with_zone,
)
from tocsin.core.time import cron
from tocsin.core.time.zones import is_known_zone
from tocsin.errors import ConfigError
from tocsin.workflows.host_zone import host_zone_name

Overlap = Literal["skip", "allow"]
CatchUp = Literal["latest", "none", "all"]
StepFn = Callable[..., Any]
MAX_SCHEDULE_ID = 64  # the occurrence ledger's trigger_id column
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*", re.ASCII)


def _check_id(kind: str, value: object) -> str:
    if not isinstance(value, str) or _ID.fullmatch(value) is None or "__" in value:
        raise ConfigError(messages.workflow_id_invalid(kind, value), code="workflow_invalid")
    return value


def _check_json_object(name: str, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(messages.schedule_field_not_object(name), code="schedule_invalid")
    return dict(value)


def check_tree(tree: object) -> None:
    """A ``trigger=`` must be a tree of ``Cron`` / event / ``AllOf`` / ``AnyOf`` nodes."""
    if not isinstance(tree, Cron | Event | Compound):
        raise ConfigError(messages.trigger_node_invalid(tree), code="trigger_invalid")
    check_shape(tree)


def time_leaves(tree: Node) -> list[tuple[str, Cron]]:
    return [(p, leaf) for p, leaf in leaves(tree) if isinstance(leaf, Cron)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedule:
    """When a workflow fires: an extended cron expression in an IANA zone (SPEC §12, §13), or
    a compound ``trigger`` (``AllOf`` / ``AnyOf`` over ``Cron`` and event triggers; its time
    triggers without a zone take ``timezone``). ``cron=`` is the shorthand for one time trigger
    that fires a repeated wall time once.

    ``id`` is required when a workflow declares a list of schedules. ``overlap="skip"`` (the
    default) fires nothing while a run of this schedule is still pending or running.
    """

    cron: str | None = None
    timezone: str | None = None
    id: str | None = None
    trigger: Node | None = None
    input_data: Mapping[str, Any] | None = None
    initial_state: Mapping[str, Any] | None = None
    request_context: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    overlap: Overlap = "skip"
    catch_up: CatchUp = "latest"  # the missed instants a due fire owes: latest | none | all
    max_catch_up: int = 100  # catch_up="all": at most this many missed instants fire
    max_concurrent: int | None = None  # runs of this schedule running at once (None: no limit)
    retry: Mapping[str, Any] | None = None  # its runs' retry policy (a workflow's overrides it)
    on_failure: Alerts | None = None  # actions or a callable, once per run failed for good

    def __post_init__(self) -> None:
        if (self.cron is None) == (self.trigger is None):
            given = "both" if self.cron is not None else "neither"
            raise ConfigError(messages.schedule_cron_or_trigger(given), code="schedule_invalid")
        if self.cron is not None:
            cron.parse(self.cron, dialect="extended")  # raises CronError (a ConfigError)
        else:
            check_tree(self.trigger)
        if self.timezone is not None and not is_known_zone(self.timezone):
            raise ConfigError(messages.schedule_timezone_unknown(self.timezone), code="tz")
        if self.overlap not in ("skip", "allow"):
            raise ConfigError(messages.schedule_overlap_invalid(self.overlap), code="overlap")
        if self.catch_up not in ("latest", "none", "all"):
            raise ConfigError(messages.catch_up_invalid(self.catch_up), code="catch_up")
        m = self.max_catch_up
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 10_000:
            raise ConfigError(messages.max_catch_up_invalid(m), code="catch_up")
        if self.id is not None:
            _check_id("schedule", self.id)
        owner = "schedule" if self.id is None else f"schedule '{self.id}'"
        check_max_concurrent(owner, self.max_concurrent)
        for name in ("input_data", "initial_state", "request_context", "metadata"):
            _check_json_object(name, getattr(self, name))
        owner = f"schedule '{self.id or self.cron or 'trigger'}'"
        checked_retry(owner, self.retry, "schedule_invalid")
        checked_alerts(owner, self.on_failure, "schedule_invalid")


@dataclass(frozen=True, slots=True)
class Step:
    """One step: ``fn(data, ctx)`` with optional Pydantic models for its input and output."""

    id: str
    fn: StepFn
    input: type[BaseModel] | None = None
    output: type[BaseModel] | None = None
    retry: dict[str, Any] | None = None  # overrides its workflow's and schedule's
    timeout_s: float | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def step(
    *,
    id: str,
    input: type[BaseModel] | None = None,
    output: type[BaseModel] | None = None,
    retry: Mapping[str, Any] | None = None,
    timeout_s: float | None = None,
) -> Callable[[StepFn], Step]:
    """Decorator: ``@step(id="send-report", input=In, output=Out)`` on ``def f(data, ctx)``
    (``async def`` works too). ``retry`` (the keys of a trigger's ``"retry"``) overrides the
    workflow's and the schedule's for a failure of this step; past ``timeout_s`` seconds the
    step fails (an ``async`` step is cancelled; a sync one keeps its thread until it returns,
    its late result discarded)."""
    _check_id("step", id)
    policy = checked_retry(f"step '{id}'", retry, "workflow_invalid")
    limit = checked_timeout(f"step '{id}'", timeout_s, "workflow_invalid")
    for model in (input, output):
        if model is not None and not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigError(messages.step_model_invalid(id), code="workflow_invalid")

    def wrap(fn: StepFn) -> Step:
        if not callable(fn):
            raise ConfigError(messages.step_model_invalid(id), code="workflow_invalid")
        return Step(id=id, fn=fn, input=input, output=output, retry=policy, timeout_s=limit)

    return wrap


@dataclass(frozen=True, slots=True)
class Stage:
    """A sequential step (one member) or a parallel group (``parallel=True``)."""

    steps: tuple[Step, ...]
    parallel: bool = False


@dataclass(frozen=True, slots=True)
class DeclaredSchedule:
    """A schedule as the workflow declares it, with its stable id and resolved zone."""

    id: str
    workflow_id: str
    cron: str
    timezone: str
    input_data: dict[str, Any] | None
    initial_state: dict[str, Any] | None
    request_context: dict[str, Any] | None
    metadata: dict[str, Any] | None
    overlap: Overlap
    trigger: dict[str, Any] | None = None  # the compound trigger's JSON tree (SPEC §13)
    catch_up: CatchUp = "latest"
    max_catch_up: int = 100
    max_concurrent: int | None = None  # runs of this schedule running at once (claim-time)
    retry: dict[str, Any] | None = None
    on_failure: Alerts | None = None


@dataclass(frozen=True, slots=True)
class Workflow:
    """A committed workflow: its id, models, stages and declared schedules."""

    id: str
    input: type[BaseModel] | None
    output: type[BaseModel] | None
    stages: tuple[Stage, ...]
    schedules: tuple[DeclaredSchedule, ...]
    description: str = ""
    tenants: bool = False  # a tenant may start it from a trigger without schedules:write
    max_concurrent: int | None = None  # its runs running at once, every worker (None: no limit)
    retry: dict[str, Any] | None = None  # overrides its schedules'; a step's overrides it
    on_failure: Alerts | None = None  # overrides its schedules'
    timeout_s: float | None = None  # the longest one attempt of a run may take

    @property
    def step_ids(self) -> list[str]:
        return [s.id for stage in self.stages for s in stage.steps]

    def step(self, step_id: str | None) -> Step | None:
        return next((s for st in self.stages for s in st.steps if s.id == step_id), None)

    def schedule(self, schedule_id: str | None) -> DeclaredSchedule | None:
        return next((s for s in self.schedules if s.id == schedule_id), None)

    def retry_for(self, step_id: str | None, schedule_id: str | None) -> dict[str, Any] | None:
        """The retry policy in force for a failure of ``step_id`` in a run of ``schedule_id``:
        the step's, else the workflow's, else the schedule's (as written; None: no retry)."""
        step, declared = self.step(step_id), self.schedule(schedule_id)
        raws = (
            None if step is None else step.retry,
            self.retry,
            None if declared is None else declared.retry,
        )
        return next((dict(raw) for raw in raws if raw is not None), None)

    def alerts_for(self, schedule_id: str | None) -> Alerts | None:
        """The ``on_failure`` of a run of ``schedule_id``: the workflow's, else the schedule's."""
        declared = self.schedule(schedule_id)
        if self.on_failure is not None:
            return self.on_failure
        return None if declared is None else declared.on_failure


@dataclass(slots=True)
class WorkflowBuilder:
    """What ``workflow(...)`` returns: chain ``.then`` / ``.parallel``, then ``.commit()``."""

    id: str
    input: type[BaseModel] | None
    output: type[BaseModel] | None
    schedules: tuple[DeclaredSchedule, ...]
    description: str = ""
    tenants: bool = False
    max_concurrent: int | None = None
    stages: list[Stage] = field(default_factory=list)
    retry: dict[str, Any] | None = None
    on_failure: Alerts | None = None
    timeout_s: float | None = None

    def then(self, step: Step) -> WorkflowBuilder:
        self.stages.append(Stage((self._step(step),)))
        return self

    def parallel(self, steps: Sequence[Step]) -> WorkflowBuilder:
        group = tuple(self._step(s) for s in steps)
        if not group:
            raise ConfigError(messages.parallel_empty(self.id), code="workflow_invalid")
        self.stages.append(Stage(group, parallel=True))
        return self

    def _step(self, candidate: object) -> Step:
        if not isinstance(candidate, Step):
            raise ConfigError(messages.not_a_step(self.id, candidate), code="workflow_invalid")
        taken = {s.id for stage in self.stages for s in stage.steps}
        if candidate.id in taken:
            raise ConfigError(
                messages.step_id_duplicate(self.id, candidate.id), code="workflow_invalid"
            )
        return candidate

    def commit(self) -> Workflow:
        if not self.stages:
            raise ConfigError(messages.workflow_without_steps(self.id), code="workflow_invalid")
        return Workflow(
            id=self.id,
            input=self.input,
            output=self.output,
            stages=tuple(self.stages),
            schedules=self.schedules,
            description=self.description,
            tenants=self.tenants,
            max_concurrent=self.max_concurrent,
            retry=self.retry,
            on_failure=self.on_failure,
            timeout_s=self.timeout_s,
        )


def workflow(
    *,
    id: str,
    input: type[BaseModel] | None = None,
    output: type[BaseModel] | None = None,
    schedule: Schedule | Sequence[Schedule] | None = None,
    description: str = "",
    tenants: bool = False,
    max_concurrent: int | None = None,
    retry: Mapping[str, Any] | None = None,
    on_failure: Alerts | None = None,
    timeout_s: float | None = None,
) -> WorkflowBuilder:
    """Start defining a workflow; its schedules are validated now (SPEC §12). ``tenants=True``
    exposes it to tenants: a tenant token may then save a ``start_workflow`` action starting it
    without the ``schedules:write`` permission (``tocsin.core.config.exposure``).
    ``max_concurrent``: at most that many of its runs running at once, across every worker (a
    run past it stays pending until one ends).

    ``retry`` (the keys of a trigger's ``"retry"``) retries a failed run from its first
    unfinished step; ``on_failure`` (a list of actions, or a callable taking the failed run)
    runs once when a run fails for good; ``timeout_s`` bounds one attempt of a run."""
    _check_id("workflow", id)
    if not isinstance(tenants, bool):
        raise ConfigError(messages.workflow_tenants_not_bool(id), code="workflow_invalid")
    check_max_concurrent(f"workflow '{id}'", max_concurrent)
    owner = f"workflow '{id}'"
    return WorkflowBuilder(
        id=id,
        input=input,
        output=output,
        schedules=declared_schedules(id, schedule),
        description=description,
        tenants=tenants,
        max_concurrent=max_concurrent,
        retry=checked_retry(owner, retry, "workflow_invalid"),
        on_failure=checked_alerts(owner, on_failure, "workflow_invalid"),
        timeout_s=checked_timeout(owner, timeout_s, "workflow_invalid"),
    )


MAX_CONCURRENT = 10_000


def check_max_concurrent(owner: str, value: object) -> None:
    """``max_concurrent`` is None or a whole number from 1 to :data:`MAX_CONCURRENT`."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENT:
        raise ConfigError(messages.max_concurrent_invalid(owner, value), code="workflow_invalid")


def limited_schedules(workflows: Iterable[Workflow]) -> frozenset[str]:
    """The ids of the declared schedules of ``workflows`` (a registry's) with ``max_concurrent``:
    their runs are inserted with a claim scope of their own (``store.workflow_runs.insert_runs``),
    where the claim keeps that limit; every other run of a workflow shares its workflow's."""
    return frozenset(s.id for w in workflows for s in w.schedules if s.max_concurrent)


def declared_schedules(
    workflow_id: str,
    schedule: Schedule | Sequence[Schedule] | None,
    notes: list[str] | None = None,
) -> tuple[DeclaredSchedule, ...]:
    """The schedules of ``schedule=`` with their ids: ``wf_<id>`` or ``wf_<id>__<scheduleId>``.
    Advice (an AND of time triggers, the host's zone) is a ``UserWarning``, or appended to
    ``notes`` when given (no process-wide warnings filter is touched)."""
    if schedule is None:
        return ()
    if isinstance(schedule, Schedule):
        return (_declared(f"wf_{workflow_id}", workflow_id, schedule, notes),)
    out: list[DeclaredSchedule] = []
    for entry in schedule:
        if not isinstance(entry, Schedule):
            raise ConfigError(messages.not_a_schedule(workflow_id), code="schedule_invalid")
        if entry.id is None:
            raise ConfigError(messages.schedule_id_required(workflow_id), code="schedule_invalid")
        sid = f"wf_{workflow_id}__{entry.id}"
        if any(d.id == sid for d in out):
            raise ConfigError(messages.schedule_id_duplicate(sid), code="schedule_invalid")
        out.append(_declared(sid, workflow_id, entry, notes))
    return tuple(out)


def _advise(notes: list[str] | None, text: str) -> None:
    if notes is None:
        warnings.warn(text, UserWarning, stacklevel=5)  # the caller of workflow(...)
    else:
        notes.append(text)


def _declared(
    sid: str, workflow_id: str, s: Schedule, notes: list[str] | None = None
) -> DeclaredSchedule:
    if len(sid) > MAX_SCHEDULE_ID:
        raise ConfigError(messages.schedule_id_too_long(sid), code="schedule_invalid")
    zone = s.timezone
    tree = None
    if s.trigger is not None:
        if and_of_times(s.trigger):
            _advise(notes, messages.trigger_and_of_times(sid))
        if zone is None and all(leaf.timezone for _, leaf in time_leaves(s.trigger)):
            zone = "UTC"  # every time trigger has its own zone: the schedule's is never read
    if zone is None:
        zone = host_zone_name()
        _advise(notes, messages.schedule_host_zone(sid, zone))
    if s.trigger is not None:
        tree = to_json(with_zone(s.trigger, zone))
    return DeclaredSchedule(
        id=sid,
        workflow_id=workflow_id,
        cron=" ".join(s.cron.split()) if s.cron is not None else "",
        timezone=zone,
        trigger=tree,
        input_data=_check_json_object("input_data", s.input_data),
        initial_state=_check_json_object("initial_state", s.initial_state),
        request_context=_check_json_object("request_context", s.request_context),
        metadata=_check_json_object("metadata", s.metadata),
        overlap=s.overlap,
        catch_up=s.catch_up,
        max_catch_up=s.max_catch_up,
        max_concurrent=s.max_concurrent,
        retry=checked_retry(f"schedule '{sid}'", s.retry, "schedule_invalid"),
        on_failure=checked_alerts(f"schedule '{sid}'", s.on_failure, "schedule_invalid"),
    )


__all__ = [
    "CatchUp",
    "DeclaredSchedule",
    "Overlap",
    "Schedule",
    "Stage",
    "Step",
    "Workflow",
    "WorkflowBuilder",
    "declared_schedules",
    "limited_schedules",
    "step",
    "workflow",
]
