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
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal, NoReturn

from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from tocsin import messages
from tocsin.core.config.receipts import truncate_error
from tocsin.core.model import Run
from tocsin.errors import NonRetryable
from tocsin.runs.clock import PassClock, elapsed_reader, iso_reader, pass_clock
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
    failed_step: str | None = None  # the step that failed the run (None: the run's input…)
    retryable: bool = True  # False: a step raised NonRetryable, or the run's input / output


class StepTimedOut(Exception):
    """A step ran past its ``timeout_s`` or its run's."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A pass's time limits: the workflow's ``timeout_s``, of which ``elapsed()`` is spent (the
    monotonic clock: an execution budget, not scheduling time)."""

    workflow_id: str
    run_s: float | None
    elapsed: Callable[[], float]

    def of(self, s: Step) -> tuple[float | None, str]:
        """Seconds ``s`` may take now (None: no limit), and the text it fails with past them."""
        left = None if self.run_s is None else self.run_s - self.elapsed()
        if left is not None and (s.timeout_s is None or left < s.timeout_s):
            return left, messages.run_timed_out(s.id, self.workflow_id, float(self.run_s or 0))
        if s.timeout_s is None:
            return None, ""  # (no limit: nothing to fail with)
        return s.timeout_s, messages.step_timed_out(s.id, s.timeout_s)


def run_stages(
    wf: Workflow,
    run: Run,
    *,
    now: datetime,
    save: SaveFn,
    clock: PassClock | None = None,
) -> Outcome:
    """Execute every stage of ``wf`` that has not succeeded yet for ``run`` (the one claim's
    run: its workflow is ``trigger_id``, its step receipts ``action_results``). Steps see
    ``now``; their receipts' ``started_at``/``ended_at`` are read from ``clock`` when each really
    starts and ends (default: ``now`` plus the time elapsed since this call)."""
    stamp = iso_reader(clock or pass_clock(now))
    limits = Limits(wf.id, wf.timeout_s, elapsed_reader())
    steps: list[Receipt] = [dict(r) for r in run.action_results]
    try:
        data = _checked(wf.input, run.input)
    except (ModelError, TypeError, ValueError) as exc:
        return Outcome("failed", steps, error=_model_error("input", exc), retryable=False)
    last = len(wf.stages) - 1
    for index, stage in enumerate(wf.stages):
        # what each succeeded step of the run handed on: its stored output, or as this pass
        # checked it (an instance of its output model: the next step's input, when the same
        # model, is not dumped and validated again)
        values = {r["id"]: r.get("output") for r in steps if r.get("status") == "success"}
        todo = [s for s in stage.steps if s.id not in values]
        fresh = _run_group(todo, data, run, now, stamp, limits) if todo else []
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
                return _failed(steps, receipt)
        data = _stage_output(stage, values)
    try:
        return Outcome("success", steps, output=_dumped(wf.output, data))
    except (ModelError, TypeError, ValueError) as exc:
        return Outcome("failed", steps, error=_model_error("output", exc), retryable=False)


def _failed(steps: list[Receipt], receipt: Receipt) -> Outcome:
    step_id, error = receipt["id"], str(receipt["error"])
    named = error if error.startswith(f"step '{step_id}' timed out") else None
    return Outcome(
        "failed",
        steps,
        error=named or f"step '{step_id}': {error}",
        failed_step=step_id,
        retryable=receipt.get("retryable", True) is not False,
    )


def _stage_output(stage: Stage, values: Mapping[str, Any]) -> Any:
    if stage.parallel:
        return {s.id: _plain(values.get(s.id)) for s in stage.steps}
    return values.get(stage.steps[0].id)


Stamp = Callable[[], str]
"""The current instant as ISO text (``runs.clock.iso_reader``): a receipt's start or end."""

Ran = tuple[Receipt, Any]
"""A step's receipt, and on success its output as checked (an instance of its output model)."""


def _run_group(
    todo: list[Step],
    data: Any,
    run: Run,
    now: datetime,
    stamp: Stamp,
    limits: Limits,
) -> list[Ran]:
    if len(todo) == 1:
        return [_run_step(todo[0], data, run, now, stamp, limits)]
    data = _plain(data)  # each step of a parallel group validates its own instance of it
    with ThreadPoolExecutor(max_workers=min(8, len(todo)), thread_name_prefix="step") as pool:
        return list(pool.map(lambda s: _run_step(s, data, run, now, stamp, limits), todo))


def _context(s: Step, run: Run, now: datetime) -> StepContext:
    receipts = run.action_results
    previous = next((r for r in receipts if r.get("id") == s.id), None) if receipts else None
    resuming = previous is not None and previous.get("status") == "suspended"
    return StepContext(
        run_id=str(run.id),
        workflow_id=str(run.trigger_id),
        step_id=s.id,
        now=now,
        attempt=int(run.attempt or run.attempts or 1),
        schedule_id=run.schedule_id,
        scheduled_for=run.scheduled_for,
        initial_state=run.initial_state,
        request_context=run.request_context,
        resume_data=run.resume_data if resuming else None,
    )


def _run_step(s: Step, data: Any, run: Run, now: datetime, stamp: Stamp, limits: Limits) -> Ran:
    receipt: Receipt = {"id": s.id, "status": "running", "output": None, "error": None}
    receipt["started_at"] = stamp()
    value = None
    try:
        arg = _handed(s.input, data) if s.input is not None else _plain(data)
        limit, late = limits.of(s)
        value = _checked(s.output, _call(s, arg, _context(s, run, now), limit, late))
        receipt["output"] = _plain(value)
        receipt["status"] = "success"
    except Suspended as signal:
        payload = _jsonable(signal.payload)
        receipt["status"] = "suspended"
        receipt["payload"] = payload
    except ModelError as exc:
        receipt["status"] = "failed"
        receipt["error"] = truncate_error(str(exc))
    except NonRetryable as exc:
        receipt["status"] = "failed"
        receipt["error"] = truncate_error(str(exc) or type(exc).__name__)
        receipt["retryable"] = False
    except Exception as exc:
        receipt["status"] = "failed"
        receipt["error"] = truncate_error(str(exc) or type(exc).__name__)
    receipt["ended_at"] = stamp()
    return receipt, value


def _call(s: Step, arg: Any, ctx: StepContext, limit: float | None = None, late: str = "") -> Any:
    """``s`` called; past ``limit`` seconds ``StepTimedOut(late)``: an ``async`` step is
    cancelled, a sync one runs on to its end on its own thread, which this one waits for (it
    keeps its slot), its result and its log lines from then on discarded."""
    if limit is not None and limit <= 0:
        raise StepTimedOut(late)
    if limit is not None and not inspect.iscoroutinefunction(s.fn):
        return _on_thread(s, arg, ctx, limit, late)
    takes_ctx = _arity(s.fn) != 1
    result = s.fn(arg, ctx) if takes_ctx else s.fn(arg)
    if not isinstance(result, BaseModel) and inspect.isawaitable(result):
        return _run_async(result, limit, late)
    return result


def _run_async(awaitable: Any, limit: float | None, late: str) -> Any:
    """An ``async`` step's awaitable run to its end on an event loop of its own: on this thread,
    or, when a loop already runs here (the caller is async code, or a library such as
    Playwright's sync API drives one), on a thread of its own this one waits for."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable, limit, late))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tocsin-async-step") as pool:
        return pool.submit(lambda: asyncio.run(_await(awaitable, limit, late))).result()


async def _await(awaitable: Any, limit: float | None = None, late: str = "") -> Any:
    if limit is None:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, limit)
    except TimeoutError:
        raise StepTimedOut(late) from None


def _on_thread(s: Step, arg: Any, ctx: StepContext, limit: float, late: str) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = _call(s, arg, ctx)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"step-{s.id}", daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        with _discarding_logs(thread):
            thread.join()  # cannot be stopped: it keeps the slot until it returns
        raise StepTimedOut(late)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Late(logging.Filter):
    def __init__(self, ident: int | None) -> None:
        super().__init__()
        self.ident = ident

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self.ident


class _discarding_logs:
    """While a late step's thread runs on, its log records reach no handler."""

    def __init__(self, thread: threading.Thread) -> None:
        self.late = _Late(thread.ident)
        self.handlers: list[logging.Handler] = []

    def __enter__(self) -> None:
        loggers = [logging.getLogger(), *logging.root.manager.loggerDict.values()]
        for logger in loggers:
            if isinstance(logger, logging.Logger):
                self.handlers.extend(logger.handlers)
        for handler in self.handlers:
            handler.addFilter(self.late)

    def __exit__(self, *exc: object) -> None:
        for handler in self.handlers:
            handler.removeFilter(self.late)


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


__all__ = ["Outcome", "StepContext", "StepTimedOut", "Suspended", "run_stages"]
