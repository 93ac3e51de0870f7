"""Executing one workflow run's stages (SPEC §12): validation, receipts, suspend, parallel groups.

The caller (``tocsin.workflows.runner``) claims the run and persists; this module decides. Each
step leaves a receipt ``{id, status, output, error, started_at, ended_at}``; a step whose
receipt says ``success`` is never executed again, on a retry or a resume (the receipts rule of
SPEC §9, per step): its stored output feeds the next stage instead.

Data flow: the run's input (validated by the workflow's input model) feeds the first stage; a
``.then`` stage hands its step's output on; a ``.parallel`` stage runs its steps on the same
input (in threads) and hands ``{step_id: output}`` on. The last stage's output, validated by the
workflow's output model, is the run's output. A Pydantic validation failure fails the step (and
the run) with the model's message. ``ctx.suspend(payload)`` leaves the run ``suspended``; on
resume the same step runs again with ``ctx.resume_data`` set.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal, NoReturn

from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from tocsin.core.config.receipts import truncate_error
from tocsin.runs.clock import PassClock, iso_reader, pass_clock
from tocsin.workflows.definition import Stage, Step, Workflow

Receipt = dict[str, Any]
Status = Literal["success", "failed", "suspended", "lost"]
SaveFn = Callable[[list[Receipt]], bool]
"""Persists the receipts so far; False when the run is no longer ours (canceled, requeued)."""


class Suspended(Exception):
    """Raised by :meth:`StepContext.suspend`."""

    def __init__(self, payload: Any) -> None:
        super().__init__("suspended")
        self.payload = payload


@dataclass(slots=True, kw_only=True)
class StepContext:
    """What a step sees besides its input: the run, the clock value, state and resume data."""

    run_id: str
    workflow_id: str
    step_id: str
    now: datetime
    attempt: int = 1
    schedule_id: str | None = None
    scheduled_for: datetime | None = None
    initial_state: dict[str, Any] | None = None
    request_context: dict[str, Any] | None = None
    resume_data: Any = None

    def suspend(self, payload: Any = None) -> NoReturn:
        """Stop here; the run is ``suspended`` until ``resume_workflow_run`` (SPEC §12)."""
        raise Suspended(payload)


@dataclass(slots=True)
class Outcome:
    """How a pass over the stages ended."""

    status: Status
    steps: list[Receipt]
    output: Any = None
    error: str | None = None
    suspend_payload: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def run_stages(
    wf: Workflow,
    run: Mapping[str, Any],
    *,
    now: datetime,
    save: SaveFn,
    clock: PassClock | None = None,
) -> Outcome:
    """Execute every stage of ``wf`` that has not succeeded yet for ``run``. Steps see ``now``;
    their receipts' ``started_at``/``ended_at`` are read from ``clock`` when each really starts
    and ends (default: ``now`` plus the time elapsed since this call)."""
    stamp = iso_reader(clock or pass_clock(now))
    steps: list[Receipt] = [dict(r) for r in run.get("steps") or []]
    try:
        data = _checked(wf.input, run.get("input"))
    except (ModelError, TypeError, ValueError) as exc:
        return Outcome("failed", steps, error=_model_error("input", exc))
    last = len(wf.stages) - 1
    for index, stage in enumerate(wf.stages):
        # what each succeeded step of the run handed on: its stored output, or as this pass
        # checked it (an instance of its output model: the next step's input, when the same
        # model, is not dumped and validated again)
        values = {r["id"]: r.get("output") for r in steps if r.get("status") == "success"}
        todo = [s for s in stage.steps if s.id not in values]
        fresh = _run_group(todo, data, run, now, stamp) if todo else []
        for receipt, value in fresh:
            _upsert(steps, receipt)
            if receipt["status"] == "success":
                values[receipt["id"]] = value
        # after the last stage the finish writes the receipts (one transaction, same fence)
        if fresh and index != last and not save(steps):
            return Outcome("lost", steps)
        for receipt, _ in fresh:
            if receipt["status"] == "suspended":
                return Outcome("suspended", steps, suspend_payload=receipt.get("payload"))
            if receipt["status"] == "failed":
                return Outcome("failed", steps, error=f"step '{receipt['id']}': {receipt['error']}")
        data = _stage_output(stage, values)
    try:
        return Outcome("success", steps, output=_dumped(wf.output, data))
    except (ModelError, TypeError, ValueError) as exc:
        return Outcome("failed", steps, error=_model_error("output", exc))


def _stage_output(stage: Stage, values: Mapping[str, Any]) -> Any:
    if stage.parallel:
        return {s.id: _plain(values.get(s.id)) for s in stage.steps}
    return values.get(stage.steps[0].id)


Stamp = Callable[[], str]
"""The current instant as ISO text (``runs.clock.iso_reader``): a receipt's start or end."""

Ran = tuple[Receipt, Any]
"""A step's receipt, and on success its output as checked (an instance of its output model)."""


def _run_group(
    todo: list[Step], data: Any, run: Mapping[str, Any], now: datetime, stamp: Stamp
) -> list[Ran]:
    if len(todo) == 1:
        return [_run_step(todo[0], data, run, now, stamp)]
    data = _plain(data)  # each step of a parallel group validates its own instance of it
    with ThreadPoolExecutor(max_workers=min(8, len(todo)), thread_name_prefix="step") as pool:
        return list(pool.map(lambda s: _run_step(s, data, run, now, stamp), todo))


def _context(s: Step, run: Mapping[str, Any], now: datetime) -> StepContext:
    receipts = run.get("steps")
    previous = next((r for r in receipts if r.get("id") == s.id), None) if receipts else None
    resuming = previous is not None and previous.get("status") == "suspended"
    return StepContext(
        run_id=str(run["id"]),
        workflow_id=str(run["workflow_id"]),
        step_id=s.id,
        now=now,
        attempt=int(run.get("attempts") or 1),
        schedule_id=run.get("schedule_id"),
        scheduled_for=run.get("scheduled_for"),
        initial_state=run.get("initial_state"),
        request_context=run.get("request_context"),
        resume_data=run.get("resume_data") if resuming else None,
    )


def _run_step(s: Step, data: Any, run: Mapping[str, Any], now: datetime, stamp: Stamp) -> Ran:
    receipt: Receipt = {"id": s.id, "status": "running", "output": None, "error": None}
    receipt["started_at"] = stamp()
    value = None
    try:
        arg = _handed(s.input, data) if s.input is not None else _plain(data)
        value = _checked(s.output, _call(s, arg, _context(s, run, now)))
        receipt["output"] = _plain(value)
        receipt["status"] = "success"
    except Suspended as signal:
        payload = _jsonable(signal.payload)
        receipt["status"] = "suspended"
        receipt["payload"] = payload
    except ModelError as exc:
        receipt["status"] = "failed"
        receipt["error"] = truncate_error(str(exc))
    except Exception as exc:
        receipt["status"] = "failed"
        receipt["error"] = truncate_error(str(exc) or type(exc).__name__)
    receipt["ended_at"] = stamp()
    return receipt, value


def _call(s: Step, arg: Any, ctx: StepContext) -> Any:
    takes_ctx = _arity(s.fn) != 1
    result = s.fn(arg, ctx) if takes_ctx else s.fn(arg)
    if not isinstance(result, BaseModel) and inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` takes (1: no context), read once per step."""
    try:
        return _cached_arity(fn)
    except TypeError:  # an unhashable callable
        return _signature_arity(fn)


@lru_cache(maxsize=1024)
def _cached_arity(fn: Callable[..., Any]) -> int:
    return _signature_arity(fn)


def _signature_arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds)


def _checked(model: type[BaseModel] | None, value: Any) -> Any:
    """``value`` validated by ``model`` (an instance of it), from its plain form; without a
    model, checked to be plain JSON. What a step returns goes through this."""
    if model is None:
        return _jsonable(value)
    return model.model_validate(_plain(value))


def _handed(model: type[BaseModel] | None, value: Any) -> Any:
    """:func:`_checked`, except that an instance of exactly ``model`` is taken as it is: the
    run's input and a step's output are validated once, by this pass, and handed on as the
    instance (to one step, or as the run's output)."""
    if model is not None and type(value) is model:
        return value
    return _checked(model, value)


def _dumped(model: type[BaseModel] | None, value: Any) -> Any:
    """``value`` checked by ``model`` (:func:`_handed`) and reduced to plain JSON."""
    return _plain(_handed(model, value))


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _jsonable(value: Any) -> Any:
    plain = _plain(value)
    json.dumps(plain)  # raises TypeError / ValueError for what a JSON column cannot hold
    return plain


def _model_error(what: str, exc: Exception) -> str:
    return truncate_error(f"workflow {what} invalid: {exc}")


def _upsert(steps: list[Receipt], receipt: Receipt) -> None:
    for index, existing in enumerate(steps):
        if existing.get("id") == receipt["id"]:
            steps[index] = receipt
            return
    steps.append(receipt)


__all__ = ["Outcome", "StepContext", "Suspended", "run_stages"]
