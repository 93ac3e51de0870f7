"""Lanes on the facade (SPEC §14): ``Tocsin.open(url, lanes=[...])`` and ``t.lanes``.

```python
t = Tocsin.open(url, lanes=[intake])
t.lanes.trigger("content-intake", window=(start, end), kind="manual", now=now)
t.lanes.trigger("content-intake", kind="retry", run_id="run_…", now=now)
t.lanes.contracts("content-intake", skip=0, limit=50, decision="noop")
t.lanes.verify(contract); t.lanes.list(); t.lanes.get("content-intake")
t.lanes.pause("content-intake", now=now); t.lanes.resume("content-intake", now=now)
t.lanes.fires("content-intake", skip=0, limit=50)     # scheduled runs with the skips between
t.lanes.next_fires("content-intake", n=10, now=now)   # the instants the tick runs it at
t.lanes.requeue("content-intake", "attempt_…", now=now)  # a lost / stale attempt → pending
```

``trigger`` admits and executes at once and returns the attempt (its contract, the handler's
outcome beside it). ``kind="scheduled"`` with ``scheduled_for`` is for a scheduler outside
tocsin that delivers at least once (the window defaults to ``[previous instant,
scheduled_for)``); tocsin's own tick admits scheduled runs through the occurrence ledger
(:mod:`tocsin.engine.lanes`) and ``work`` executes them.

Manual triggers: ``scheduled_for`` defaults to the window's end (the instant a scheduled run of
that window would have been due), so the same manual trigger repeated for the same window is the
same run: ``ignored / duplicate_trigger``, never a new run rejected as overlapping its twin.

Pause and resume are persisted in the lane's row and idempotent, as a workflow schedule's: a
paused lane runs nothing scheduled (manual triggers still run); resume records every instant
passed meanwhile as a ``paused`` skip and runs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionEnv
from tocsin.core.contract.lane import Window, check_instant
from tocsin.core.contract.verify import verify
from tocsin.core.model import Run, StoredLane
from tocsin.core.schedules.skips import LANE
from tocsin.engine.lane_admit import Admission, admit, legacy_ids
from tocsin.engine.lanes import COUNTS as LANES_FIRED
from tocsin.engine.lanes import (
    lane_next_fires,
    lane_pass,
    pause_lane,
    resume_lane,
    scheduled_window,
    sync_lanes,
)
from tocsin.engine.passes import Pass, fire_passes
from tocsin.errors import Conflict, NotFound, ValidationError
from tocsin.lanes.definition import MAX_LANE_ID, Lane
from tocsin.lanes.execute import execute
from tocsin.lanes.views import public_attempt, public_fire, public_lane
from tocsin.runs.retry import Requeue, requeue_run
from tocsin.service.history import history
from tocsin.service.schedules import check_page
from tocsin.service.whynot import check_n
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Store, Tx

KINDS = ("manual", "retry", "scheduled")
DECISION_STATUSES = ("ready", "noop", "stopped", "rejected", "ignored")


def _window(value: object) -> Window:
    if value is None:
        raise ValidationError(messages.LANE_WINDOW_MISSING)
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValidationError(messages.lane_window_invalid(value, None))
    return Window(value[0], value[1])


def _aware(value: object) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValidationError(messages.LANE_SCHEDULED_NEEDS_TIME)
    return check_instant(value)


class Lanes:
    """The lanes service of one facade (``Tocsin.lanes``): its registry, triggers, contracts;
    ``fire`` is the lane half of ``Tocsin.tick`` and ``work`` the lane half of ``Tocsin.work``."""

    def __init__(
        self,
        store: Store,
        registry: dict[str, Lane],
        clock: Callable[[datetime | None], datetime],
        stale_after_s: float,
        on_register: Callable[[], None] | None = None,
    ) -> None:
        self._store, self._registry, self._now = store, registry, clock
        self._stale = stale_after_s
        self._on_register = on_register  # the facade's: lanes registered → the sync is owed
        # what a failed handler's on_failure actions run with (the facade wires the runs')
        self.alert_env: Callable[[], ActionEnv | None] | None = None
        # the one worker restricted to lane attempts (the facade wires the runs')
        self.drain: Callable[[datetime, int | None], int] | None = None

    def register(self, lanes: Iterable[Lane]) -> None:
        added: dict[str, Lane] = {}
        for lane in lanes:
            if not isinstance(lane, Lane):
                raise ValidationError(messages.lane_invalid("definition", lane))
            if lane.id in self._registry or lane.id in added:
                raise ValidationError(messages.lane_duplicate(lane.id))
            added[lane.id] = lane
        self._registry.update(added)
        if added and self._on_register is not None:
            self._on_register()

    def registered(self) -> dict[str, Lane]:
        """The lanes registered with this facade, by id (a copy)."""
        return dict(self._registry)

    def _lane(self, lane_id: object) -> Lane:
        lane = self._registry.get(lane_id) if isinstance(lane_id, str) else None
        if lane is None:
            raise NotFound(messages.lane_unknown(lane_id))
        return lane

    def list(self) -> list[dict[str, Any]]:
        """Registered lanes and lanes with a stored history, by id."""
        with self._store.read() as tx:
            rows = store_lanes.list_lane_rows(tx)
            summaries = store_lanes.lane_summaries(tx)
        ids = sorted(set(rows) | set(self._registry))
        return [public_lane(i, self._registry.get(i), rows.get(i), summaries.get(i)) for i in ids]

    def get(self, lane_id: str) -> dict[str, Any]:
        """One lane (registered, or with a stored history), as :meth:`list` shows it."""
        with self._store.read() as tx:
            row = self._known(tx, lane_id)
            summary = store_lanes.lane_summaries(tx, lane_id=lane_id).get(lane_id)
        return public_lane(lane_id, self._registry.get(lane_id), row, summary)

    def _known(self, tx: Tx, lane_id: object) -> StoredLane | None:
        """The lane's row (None for a registered lane the tick has not seen yet); NotFound
        for an unknown lane."""
        row = None
        if isinstance(lane_id, str) and len(lane_id) <= MAX_LANE_ID:
            row = store_lanes.get_lane(tx, lane_id=lane_id)
        if row is None and lane_id not in self._registry:
            raise NotFound(messages.lane_unknown(lane_id))
        return row

    def pause(self, lane_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Stop the lane's scheduled runs (persisted; idempotent; a redeploy never unpauses)."""
        at = self._now(now)
        self._scheduled(lane_id, at)
        with self._store.begin() as tx:
            pause_lane(tx, lane_id=lane_id, now=at)
        return self.get(lane_id)

    def resume(self, lane_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Run again from the next instant after ``now``: the instants passed while paused are
        recorded ``paused`` and none of them runs (idempotent)."""
        at = self._now(now)
        self._scheduled(lane_id, at)
        with self._store.begin() as tx:
            resume_lane(tx, lane_id=lane_id, now=at)
        return self.get(lane_id)

    def _scheduled(self, lane_id: str, now: datetime) -> None:
        """Make sure a scheduled lane has its row (synced as the tick would); NotFound for an
        unknown lane, Conflict for a lane without a schedule."""
        lane = self._registry.get(lane_id) if isinstance(lane_id, str) else None
        if lane is not None and lane.cron:
            with self._store.begin() as tx:
                sync_lanes(tx, {lane.id: lane}, now=now)
        with self._store.read() as tx:
            row = self._known(tx, lane_id)
        if row is None or row.cron is None:
            raise Conflict(messages.lane_not_scheduled(lane_id))

    def fires(self, lane_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """The lane's scheduled runs newest first, each with its scheduled and actual time, run,
        attempt and status, interleaved with its skipped instants as a workflow schedule's
        history is: ``{"items", "total", "skip", "limit", "skips_left_off"}`` (items carry
        ``kind``: ``fire`` or ``skip``; ``total`` counts the fires)."""
        check_page(skip, limit)
        with self._store.read() as tx:
            self._known(tx, lane_id)

            def page(offset: int, count: int) -> tuple[list[dict[str, Any]], int]:
                rows, total = store_lanes.list_fires(tx, lane_id=lane_id, skip=offset, limit=count)
                return [public_fire(r) for r in rows], total

            return history(tx, page, LANE, lane_id, skip, limit)

    def next_fires(self, lane_id: str, n: int = 10, now: datetime | None = None) -> dict[str, Any]:
        """The next ``n`` instants the lane runs at (UTC and its zone), as a workflow schedule's
        ``next_fires``: the ones a tick at ``now`` runs (``due``), then the later ones
        (``scheduled``); none while paused. Conflict for a lane without a schedule."""
        at, n = self._now(now), check_n(n)
        lane = self._lane(lane_id)
        if not lane.cron:
            raise Conflict(messages.lane_not_scheduled(lane_id))
        with self._store.read() as tx:
            row = store_lanes.get_lane(tx, lane_id=lane.id)
        paused = row is not None and row.paused_at is not None
        items = lane_next_fires(lane, row, now=at, n=n)
        return {"lane_id": lane.id, "paused": paused, "items": items}

    def trigger(
        self,
        lane_id: str,
        window: tuple[datetime, datetime] | None = None,
        *,
        kind: str = "manual",
        run_id: str | None = None,
        scheduled_for: datetime | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Admit one attempt and, when admitted, execute it now; returns the attempt."""
        at = self._now(now)
        lane = self._lane(lane_id)
        if kind not in KINDS:
            raise ValidationError(messages.lane_trigger_kind_invalid(kind))
        if kind == "retry":
            if scheduled_for is not None:
                raise ValidationError(messages.LANE_RETRY_KEEPS_ITS_TIME)
            win, due, zone = self._retried(lane, run_id, window)
        else:
            if run_id is not None:
                raise ValidationError(messages.LANE_RUN_ID_ONLY_FOR_RETRY)
            win, due, zone = self._fresh(lane, kind, window, scheduled_for)
        with self._store.begin() as tx:
            adm = admit(
                tx,
                lane,
                kind=kind,
                scheduled_for=due,
                window=win,
                zone=zone,
                now=at,
                stale_after_s=self._stale,
            )
        if adm.decision is None:
            self._execute(lane, adm, at)
        return self.attempt(adm.attempt_id)

    def _fresh(
        self,
        lane: Lane,
        kind: str,
        window: object,
        scheduled_for: datetime | None,
    ) -> tuple[Window, datetime, str]:
        if kind == "manual":
            win = _window(window)
            return win, win.end if scheduled_for is None else _aware(scheduled_for), lane.zone
        due = _aware(scheduled_for)
        if window is None and lane.cron:
            computed = scheduled_window(lane, due)
            if computed is not None:
                return computed, due, lane.zone
        return _window(window), due, lane.zone

    def _retried(self, lane: Lane, run_id: object, window: object) -> tuple[Window, datetime, str]:
        if run_id is None:
            raise ValidationError(messages.LANE_RETRY_NEEDS_RUN_ID)
        run = None
        if isinstance(run_id, str) and len(run_id) <= 40:
            with self._store.read() as tx:
                run = store_lanes.get_run(tx, run_id=run_id)
        if run is None or run.lane_id != lane.id or not run.admitted:
            raise NotFound(messages.lane_run_not_found(run_id))
        if run.policy_version != lane.policy_version:
            raise ValidationError(
                messages.lane_retry_policy_changed(
                    run.run_id, run.policy_version, lane.policy_version
                )
            )
        stored = Window(run.window_start, run.window_end)
        if window is not None and _window(window) != stored:
            raise ValidationError(messages.lane_window_invalid(window, "the run's own window"))
        return stored, run.scheduled_for, run.zone

    def requeue(self, lane_id: str, attempt_id: str, now: datetime | None = None) -> dict[str, Any]:
        """The operator's requeue of one attempt: a pending one (its delivery lost) or one
        running for longer than the stale window (its worker died) goes back to pending for a
        worker with the lane (the one requeue of the queue, ``runs.retry.requeue_run``).
        NotFound for an unknown lane or an attempt of another lane; Conflict for an attempt
        live running or finished (a failed run is retried with ``kind="retry"``, a new attempt).
        Returns the attempt."""
        at = self._now(now)
        with self._store.read() as tx:
            self._known(tx, lane_id)
        rule = Requeue(
            owns=lambda entry: entry.kind == "lane" and entry.trigger_id == lane_id,
            not_found=messages.lane_attempt_not_found(attempt_id),
            refused=messages.lane_attempt_not_requeueable,
            from_failed=False,
        )
        requeue_run(self._store, run_id=attempt_id, rule=rule, now=at, stuck_after_s=self._stale)
        return self.attempt(attempt_id)

    def attempt(self, attempt_id: str) -> dict[str, Any]:
        with self._store.read() as tx:
            row = store_lanes.get_attempt(tx, attempt_id=attempt_id)
        if row is None:
            raise NotFound(messages.lane_run_not_found(attempt_id))
        return public_attempt(row)

    def contracts(
        self, lane_id: str, skip: int = 0, limit: int = 50, decision: str | None = None
    ) -> dict[str, Any]:
        """A lane's attempts newest first: ``{"items", "total", "skip", "limit"}``; each item
        carries its contract (trigger, source, selection layers and the decision)."""
        check_page(skip, limit)
        if decision is not None and decision not in DECISION_STATUSES:
            raise ValidationError(messages.lane_decision_invalid(decision))
        with self._store.read() as tx:
            self._known(tx, lane_id)
            rows, total = store_lanes.list_attempts(
                tx, lane_id=lane_id, decision=decision, skip=skip, limit=limit
            )
        return {
            "items": [public_attempt(r) for r in rows],
            "total": total,
            "skip": skip,
            "limit": limit,
        }

    @staticmethod
    def verify(contract: Mapping[str, Any], attempt: int | None = None) -> dict[str, Any]:
        """Recompute ``run_id`` / ``attempt_id`` and re-derive the decision; raises
        ``ContractMismatch`` (400) naming the first field that differs. Accepts a bare contract
        or an attempt entry (``{"contract": …, "attempt": n}``)."""
        doc: Any = contract
        if isinstance(contract, Mapping) and "contract" in contract:
            doc = contract["contract"]
            attempt = attempt if attempt is not None else contract.get("attempt")
        number = verify(doc, attempt)
        return {
            "ok": True,
            "run_id": doc["run_id"],
            "attempt_id": doc["attempt_id"],
            "attempt": number,
        }

    # --- the tick and the worker ---------------------------------------------------------

    def fire(self, now: datetime) -> int:
        """Sync the registered lanes' rows, then admit their due scheduled runs."""
        return fire_passes(self._store, [self.tick_pass()], now=now)[LANES_FIRED]

    def tick_pass(self) -> Pass:
        """The scheduled lanes' pass of the tick's one paging loop: their rows synced in its
        first page's transaction, then their due runs admitted page after page (nothing at all
        without a scheduled lane)."""
        return lane_pass(self._registry, stale_after_s=self._stale)

    def work(self, now: datetime, limit: int | None = None) -> int:
        """Execute pending attempts of the registered lanes (tick-admitted, or automatic retries
        whose ``next_attempt_at`` passed) through the one worker; returns how many."""
        if not self._registry or self.drain is None:
            return 0
        return self.drain(now, limit)

    def ids(self) -> tuple[str, ...]:
        """The ids of the registered lanes: the lane attempts this process's worker claims."""
        return tuple(sorted(self._registry))

    def execute_claimed(self, run: Run, *, now: datetime) -> str:
        """The lane attempts' executor of the one worker (``runs.worker``): execute the attempt
        the one claim took (``run.id``, its queue row, already ``running``); ``recorded`` or
        ``failed`` (a policy version changed since its admission)."""
        lane = self._registry.get(run.trigger_id)
        if lane is None:  # not claimed by a process without the lane; gone since: swept back
            return "lost"
        adm = self._admission(lane, run.id, now)
        if adm is None:
            return "failed"
        self._execute(lane, adm, now)
        return "recorded"

    def _execute(self, lane: Lane, adm: Admission, now: datetime) -> None:
        execute(
            self._store, lane, adm, now=now, stale_after_s=self._stale, alert_env=self.alert_env
        )

    def _admission(self, lane: Lane, attempt_id: str, now: datetime) -> Admission | None:
        """The admission of a claimed attempt, its run marked ``running``; None when it failed
        at once (its run's policy version is not the lane's any more)."""
        with self._store.begin() as tx:
            row = store_lanes.get_attempt(tx, attempt_id=attempt_id)
            if row is None:
                return None
            run = store_lanes.get_run(tx, run_id=row.run_id)
            if run is None:
                return None
            if run.policy_version != lane.policy_version:
                error = messages.lane_retry_policy_changed(
                    run.run_id, run.policy_version, lane.policy_version
                )
                values = {"state": "failed", "error": error}
                store_lanes.finish_attempt(tx, attempt_id=row.attempt_id, values=values, now=now)
                store_lanes.update_run(tx, run_id=run.run_id, values={"state": "failed"}, now=now)
                return None
            store_lanes.update_run(tx, run_id=run.run_id, values={"state": "running"}, now=now)
        return Admission(
            lane_id=lane.id,
            zone=run.zone,
            policy_version=run.policy_version,
            run_id=run.run_id,
            attempt=row.attempt,
            attempt_id=row.attempt_id,
            kind=row.kind,
            scheduled_for=run.scheduled_for,
            observed_at=row.observed_at,
            window=Window(run.window_start, run.window_end),
            decision=None,
            legacy_ids=legacy_ids(run),
        )


__all__ = ["DECISION_STATUSES", "KINDS", "Lanes"]
