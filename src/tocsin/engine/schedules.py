"""``fire_due_schedules``: the tick's workflow-schedule pass (SPEC §6, §12).

One transaction per call:

1. claim up to ``limit`` due rows (unpaused, ``next_fire_at <= now``; PostgreSQL ``FOR UPDATE
   SKIP LOCKED``, SQLite under ``store.begin()``, ``BEGIN IMMEDIATE``), so several schedulers
   split them;
2. per row, :func:`tocsin.core.schedules.decide.decide` (the one decision, trigger trees' too): the
   instants fired (the *latest* cron instant ``<= now`` by default: downtime coalesces onto it;
   ``catch_up`` "none" / "all") and the skipped ones, recorded in the skip ledger;
3. ``overlap="skip"`` (the default): a schedule with a pending or running run fires nothing;
4. the identities ``(schedule_id, scheduled_for)`` are claimed in the occurrence ledger under the
   fixed namespace ``"workflow"`` through the fire path (``engine.fire``: one batched claim): an
   instant is fired at most once, whatever the number of hosts (a claim not returned was fired
   already);
5. the fire row and its pending workflow run are written together (``published``); a schedule
   whose workflow is not registered with the caller (when ``registered`` is given) or whose
   stored expression no longer parses records a ``publish_failed`` fire with the error instead;
6. ``next_fire_at`` moves to the first instant after ``now``.

Returns the number of fire rows recorded. The tick drives it as a pass of its one paging loop
(:func:`schedule_pass`, :mod:`tocsin.engine.passes`), a page at a time until every schedule due
at ``now`` has fired (:func:`fire_all_due_schedules`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import DueSchedule, WorkflowSchedule
from tocsin.core.schedules.decide import Decision, State, decide
from tocsin.core.schedules.skips import SkipRange
from tocsin.engine import fire as fire_path
from tocsin.engine.ids import uuid7, uuid7s
from tocsin.engine.passes import Pass, Take, fire_passes
from tocsin.engine.resume import resume_decision
from tocsin.engine.schedule_rows import schedule_of, state_of
from tocsin.errors import ConfigError
from tocsin.store import schedules as store_schedules
from tocsin.store import workflow_runs as store_runs
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "workflow"
DEFAULT_LIMIT = 1000
COUNTS = "schedules_fired"  # the tick report's key of workflow schedule fires


@dataclass(slots=True)
class _Batch:
    """A page's writes, as columns of plain values (no object per row but its run and fire)."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    fires: list[dict[str, Any]] = field(default_factory=list)
    # the schedules' moves, a row's at one index: its id, next fire, and the fire just recorded
    move_ids: list[str] = field(default_factory=list)
    move_next: list[datetime | None] = field(default_factory=list)
    move_fires: list[str | None] = field(default_factory=list)
    # the firings to claim in the ledger (one batched claim per page), one at each index: the
    # claim itself, and the index of its row in the page, its instant and the index of its move
    firings: list[fire_path.Firing] = field(default_factory=list)
    firing_rows: list[int] = field(default_factory=list)
    firing_instants: list[datetime] = field(default_factory=list)
    firing_moves: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # made in one uuid7s call, taken from the end
    skips: list[SkipRange] = field(default_factory=list)  # due, not fired: the skip ledger's rows
    # the decision of rows alike but for their id (timing, policies, next fire, busy): decided
    # once per page (the decision is pure; only its skip ranges name the schedule)
    decisions: dict[tuple[Any, ...], Decision] = field(default_factory=dict)

    identities: dict[datetime, str] = field(default_factory=dict)  # scheduled_for → ISO text

    def identity(self, scheduled_for: datetime) -> str:
        text = self.identities.get(scheduled_for)
        if text is None:
            text = self.identities[scheduled_for] = scheduled_for.isoformat()
        return text

    def move(self, sid: str, next_fire_at: datetime | None, fire_id: str | None = None) -> int:
        """A schedule's move; its index."""
        self.move_ids.append(sid)
        self.move_next.append(next_fire_at)
        self.move_fires.append(fire_id)
        return len(self.move_ids) - 1


def fire_due_schedules(
    store: Store,
    *,
    now: datetime,
    limit: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
    limited: Collection[str] = (),
) -> int:
    """Fire every due schedule (up to ``limit``) at ``now``; returns the fires recorded
    (``limited``: the schedules declaring ``max_concurrent``, ``workflow_runs.insert_runs``)."""
    passes = [schedule_pass(limit, registered, drain=False, limited=limited)]
    return fire_passes(store, passes, now=now)[COUNTS]


def fire_all_due_schedules(
    store: Store,
    *,
    now: datetime,
    page: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
    limited: Collection[str] = (),
) -> int:
    """:func:`fire_due_schedules` a page of ``page`` rows at a time (each page its own
    transaction) until a page comes back short: every schedule due at ``now`` fires in one
    call (the tick's pass). It ends: a claimed row's ``next_fire_at`` moves past ``now`` (or to
    NULL) in its page's transaction, so no row is claimed twice at one ``now``. Returns the
    fires recorded."""
    return fire_passes(store, [schedule_pass(page, registered, limited=limited)], now=now)[COUNTS]


def schedule_pass(
    limit: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
    *,
    drain: bool = True,
    prepare: Callable[[datetime], bool] | None = None,
    limited: Collection[str] = (),
) -> Pass:
    """The workflow cron schedules as a pass of the tick's loop (:mod:`tocsin.engine.passes`):
    pages of ``limit`` due rows until a page comes back short (``drain``; else one page). Its
    units are the schedules' ids: a page names each row its claim returns, the claim leaves out
    ``take.skip`` (a page moves its rows past ``now``, ``Pass.moves``: the units of this call's
    failed pages) and, on a failed page's retry, claims ``take.only`` alone. ``limited``: the
    schedules declaring ``max_concurrent`` (their runs' own scope, ``store.workflow_runs``)."""

    def page(tx: Tx, now: datetime, take: Take) -> bool:
        claimed, fired = _fire_page(tx, now, limit, registered, take, limited)
        take.counts[COUNTS] += fired
        return drain and claimed >= limit

    if prepare is None:
        return Pass((COUNTS,), page, moves=True)
    return Pass((COUNTS,), page, prepare, moves=True)


def _fire_page(
    tx: Tx,
    now: datetime,
    limit: int,
    registered: Collection[str] | None,
    take: Take,
    limited: Collection[str] = (),
) -> tuple[int, int]:
    """One page in ``tx`` on ``take``'s terms: (due rows claimed, fires recorded)."""
    rows = store_schedules.claim_due_schedules(
        tx, now=now, limit=limit, only=take.only, skip=take.skip, claimed=take.units
    )
    if not rows:
        return 0, 0
    skipping = [r.id for r in rows if r.overlap == "skip"]
    busy = store_runs.active_schedule_ids(tx, schedule_ids=skipping)
    batch = _Batch(ids=uuid7s(now, 2 * len(rows))[::-1])
    for index, row in enumerate(rows):
        _plan(index, row, now, busy, batch)
    _fire(tx, now, registered, rows, batch, limited)
    store_schedules.advance_schedules(
        tx, ids=batch.move_ids, next_fire_at=batch.move_next, fire_ids=batch.move_fires, now=now
    )
    return len(rows), len(batch.fires)


def _plan(index: int, row: DueSchedule, now: datetime, busy: set[str], batch: _Batch) -> None:
    sid = row.id
    try:
        decision = _decision(row, now, sid in busy, batch)  # fires and skips
    except (ConfigError, ValueError) as exc:
        # claimed: next_fire_at <= now, never None
        fire = schedule_fire(
            row, row.next_fire_at or now, now, run_id=None, error=str(exc), ids=batch.ids
        )
        batch.fires.append(fire)
        batch.move(sid, None, fire["id"])
        return
    move = batch.move(sid, decision.next_due_at)
    if decision.skips:
        batch.skips += [
            r if r.target_id == sid else replace(r, target_id=sid) for r in decision.skips
        ]
    for scheduled_for in decision.fires:
        run_id = batch.ids.pop() if batch.ids else uuid7(now)
        batch.firings.append((LEDGER_NAMESPACE, sid, batch.identity(scheduled_for), run_id))
        batch.firing_rows.append(index)
        batch.firing_instants.append(scheduled_for)
        batch.firing_moves.append(move)


def _decision(row: DueSchedule, now: datetime, busy: bool, batch: _Batch) -> Decision:
    key = (
        row.cron,
        row.timezone,
        row.catch_up,
        row.max_catch_up,
        row.overlap,
        row.next_fire_at,
        busy,
    )
    found = batch.decisions.get(key)
    if found is None:
        timing = schedule_of(row)
        found = batch.decisions[key] = decide(timing, State(key[5], None, {}, busy), (), now)
    return found


def _fire(
    tx: Tx,
    now: datetime,
    registered: Collection[str] | None,
    rows: Sequence[DueSchedule],
    batch: _Batch,
    limited: Collection[str] = (),
) -> None:
    """Every firing of the page through the fire path at once, with the page's skips; a
    firing the ledger held already (fired by this host or another) records nothing."""

    def write(claimed: list[int]) -> tuple[str, ...]:
        for i in claimed:
            row = rows[batch.firing_rows[i]]
            scheduled_for = batch.firing_instants[i]
            run_id = batch.firings[i][3]
            if registered is not None and row.workflow_id not in registered:
                error = messages.workflow_unknown(row.workflow_id)
                fire = schedule_fire(
                    row, scheduled_for, now, run_id=None, error=error, ids=batch.ids
                )
            else:
                batch.runs.append(schedule_run(row, run_id, scheduled_for, now))
                fire = schedule_fire(
                    row, scheduled_for, now, run_id=run_id, error=None, ids=batch.ids
                )
            batch.fires.append(fire)
            batch.move_fires[batch.firing_moves[i]] = fire["id"]
        store_runs.insert_runs(tx, rows=batch.runs, limited=limited)
        store_schedules.insert_fires(tx, fires=batch.fires)
        return ()

    fire_path.fire(tx, batch.firings, write, skips=batch.skips, now=now)


def schedule_fire(
    row: DueSchedule,
    scheduled_for: datetime,
    now: datetime,
    *,
    run_id: str | None,
    error: str | None,
    ids: list[str] | None = None,
) -> dict[str, Any]:
    """The fire row of a schedule (``row``) at ``scheduled_for``: ``published`` with its run,
    or ``publish_failed`` with ``error``; its id taken from ``ids`` (made in bulk) when given.
    Cron fires, trigger-tree fires and their failures write the same."""
    return {
        "id": ids.pop() if ids else uuid7(now),
        "schedule_id": row.id,
        "workflow_id": row.workflow_id,
        "scheduled_for": scheduled_for,
        "fired_at": now,
        "run_id": run_id,
        "publish_status": "published" if error is None else "publish_failed",
        "error": error,
    }


def schedule_run(
    row: DueSchedule,
    run_id: str,
    scheduled_for: datetime,
    now: datetime,
    *,
    trigger: str = "scheduled",
) -> dict[str, Any]:
    """The pending run a schedule (``row``) fires for ``scheduled_for`` (``trigger``:
    "scheduled", or "backfill" for :mod:`tocsin.engine.backfill`)."""
    return new_run(
        run_id=run_id,
        workflow_id=row.workflow_id,
        input=row.input_data,
        now=now,
        trigger=trigger,
        schedule_id=row.id,
        scheduled_for=scheduled_for,
        initial_state=row.initial_state,
        request_context=row.request_context,
    )


def new_run(
    *,
    run_id: str,
    workflow_id: str,
    input: Any,
    now: datetime,
    trigger: str,
    schedule_id: str | None = None,
    scheduled_for: datetime | None = None,
    initial_state: Any = None,
    request_context: Any = None,
) -> dict[str, Any]:
    """The row of a pending workflow run: scheduled fires and manual starts write the same."""
    return {
        "id": run_id,
        "workflow_id": workflow_id,
        "schedule_id": schedule_id,
        "trigger": trigger,
        "status": "pending",
        "attempts": 0,
        "input": input,
        "output": None,
        "error": None,
        "steps": (),  # none yet, written "[]"; a tuple: the row holds nothing the collector tracks
        "initial_state": initial_state,
        "request_context": request_context,
        "suspend_payload": None,
        "resume_data": None,
        "scheduled_for": scheduled_for,
        "created_at": now,
        "updated_at": now,
        "started_at": None,
        "ended_at": None,
    }


def resume_schedule(tx: Tx, row: WorkflowSchedule, now: datetime) -> None:
    """Unpause a paused schedule (``row``, locked by the caller): the instants the pause owed are
    recorded ``paused`` (the decision of a paused schedule) and it fires again from the next
    regular instant after ``now``, with no backlog. An unreadable schedule is due at ``now``: the
    pass records why."""
    values: dict[str, Any] = {"paused_at": None}
    try:
        decision = resume_decision(tx, schedule_of(row), state_of(row, busy=False), now)
    except (ConfigError, ValueError):
        values["next_fire_at"] = now
    else:
        values["next_fire_at"] = decision.next_due_at
        if decision.state.evaluated_at is not None:
            values["evaluated_at"] = decision.state.evaluated_at
    store_schedules.update_schedule(tx, schedule_id=row.id, values=values, now=now)


__all__ = [
    "COUNTS",
    "DEFAULT_LIMIT",
    "LEDGER_NAMESPACE",
    "fire_all_due_schedules",
    "fire_due_schedules",
    "new_run",
    "resume_schedule",
    "schedule_fire",
    "schedule_pass",
    "schedule_run",
]
