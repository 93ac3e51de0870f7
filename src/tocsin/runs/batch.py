"""A claimed batch of runs of every kind, executed with as few writes as it takes (SPEC §8, §9).

A run of a kind whose executor groups its runs (``runs.worker.GroupedExecutor``: a workflow
run) joins its kind's group: executed at once, its finish written with the group's, when the
batch ends, before a run that goes alone, or on a stop. A lane attempt goes to its executor
alone. What follows is the table runs' own group.

A run whose actions left to do all write only to tocsin's own database (each a
:class:`~tocsin.actions.base.TransactionalAction`, e.g. ``notify``) joins the batch's *group*;
any other run (an outbound action, a command, a run to fail, a run whose claim needs its
heartbeat first) goes through :meth:`Worker.execute <tocsin.runs.worker.Worker.execute>` on its
own, as always, once the group gathered before it is written (an outbound effect never waits
on, or runs ahead of, the commit of the runs claimed before it).

A group is one transaction: each run's actions run in order in it (their effects: rows appended
in one statement per table, ``Tx.append``), each with its receipt timed as it really started and
ended (``runs.clock``), then every run is finished ``done`` with its receipts in one statement
(``store.runs.finish_runs``), each under its own claim fence. Effect, receipts and finish
commit together, as one run's did: a crash loses the group's effects with its receipts, and
the stale sweep hands its runs back (never a message twice).

Whatever does not go as planned is handled by the one-run path, after the group rolled back:

- an action that fails (any error but the database's lock conflicts and outages): that run
  leaves the group and runs on its own (its failure, retry policy and ``on_failure`` alerts),
  the others are tried again without it;
- a run whose fence no longer holds (requeued, claimed again): it leaves the group, ``lost``;
- a lock conflict: the group is tried again in place (``runs.retry``), then each run alone;
- an outage (down, full): the group is tried again after growing pauses until it goes, as a
  run's write is (``store.outage.through_outage``);
- anything else: each run alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from tocsin.actions.base import ActionError, TransactionalAction
from tocsin.actions.registry import get_action
from tocsin.core.config.receipts import pending_actions, upsert_receipt
from tocsin.core.model import Run, Table
from tocsin.errors import TransientStoreError
from tocsin.runs.clock import PassClock, pass_clock, timed_receipt
from tocsin.runs.definition import action_list, frozen_problem, resolve_definition
from tocsin.runs.retry import call_with_retries
from tocsin.runs.worker import GroupedExecutor, RunGroup, Worker
from tocsin.store.errors import is_transient
from tocsin.store.jsontext import json_text
from tocsin.store.outage import is_outage
from tocsin.store.runs import FinishRow, finish_runs

log = logging.getLogger("tocsin.runs.worker")

Claimed = tuple[Run, Table | None]


@dataclass(slots=True, frozen=True)
class _Member:
    """A run of the group: what it executes, planned before the group's transaction."""

    run: Run
    table: Table
    view: Mapping[str, Any]  # the table's dict, shared by the batch's runs of that table
    definition: dict[str, Any]
    todo: list[tuple[int, Mapping[str, Any], TransactionalAction]]


class _Alone(Exception):
    """A member's action failed: it runs on its own (the group rolled back)."""

    def __init__(self, member: _Member) -> None:
        super().__init__(member.run.id)
        self.member = member


class _Lost(Exception):
    """Members whose claim fence no longer holds (the group rolled back)."""

    def __init__(self, run_ids: set[str]) -> None:
        super().__init__(sorted(run_ids))
        self.run_ids = run_ids


def execute_batch(
    worker: Worker,
    batch: Iterable[Claimed],
    *,
    now: datetime,
    before_alone: Callable[[], object] | None = None,
) -> int:
    """Execute claimed runs in claim order: in groups where they can, each alone otherwise
    (module docstring); ``batch`` may be shared (a pool's slots take from one queue:
    ``runs.drain``) and is consumed as the runs start. ``before_alone`` is called before a run
    goes alone (its actions may take a while: a pool's slot hands the rest of its queue to
    another slot). On a stop, the runs not started go back to pending. Returns how many were
    executed (whatever their outcome). Never raises because of a run."""
    kinds: dict[object, TransactionalAction | None] = {}
    views: dict[str, Mapping[str, Any]] = {}
    group: list[_Member] = []
    others = _KindGroups(worker, now)
    count = 0
    runs = iter(batch)
    for run, table in runs:
        if worker.should_stop():
            count += _write_group(worker, group, now=now) + others.write()
            for unstarted in (run, *(rest for rest, _table in runs)):
                worker.release(unstarted, now=worker.time(now))
            return count
        if (kind_group := others.of(run)) is not None:
            kind_group.add(run, now=worker.time(now))
            continue
        member = _plan(worker, run, table, kinds, views, now=worker.time(now))
        if member is not None:
            group.append(member)
            continue
        count += _write_group(worker, group, now=now) + others.write()
        group = []
        if before_alone is not None:
            before_alone()
        worker.execute(run, table, now=worker.time(now))
        count += 1
    return count + _write_group(worker, group, now=now) + others.write()


class _KindGroups:
    """The groups of a slot's runs of the app's kinds whose executor groups them
    (``GroupedExecutor``: workflow runs), one per kind, made as the first run of a kind comes;
    every run of the batch reads its receipts' instants from one clock."""

    def __init__(self, worker: Worker, now: datetime) -> None:
        self._worker, self._now = worker, now
        self._groups: dict[str, RunGroup] = {}
        self._stamps: PassClock | None = None

    def of(self, run: Run) -> RunGroup | None:
        """The group ``run`` joins, or None when its kind's runs go one by one."""
        if run.kind in self._groups:
            return self._groups[run.kind]
        executor = self._worker.executors.get(run.kind)
        if not isinstance(executor, GroupedExecutor):
            return None
        if self._stamps is None:
            self._stamps = self._worker.stamps or pass_clock(self._worker.time(self._now))
        group = self._groups[run.kind] = executor.group(self._worker, self._stamps)
        return group

    def write(self) -> int:
        """Write every group's finishes: how many runs they held."""
        count = 0
        for group in self._groups.values():
            count += len(group)
            group.write()
        return count


def _plan(
    worker: Worker,
    run: Run,
    table: Table | None,
    kinds: dict[object, TransactionalAction | None],
    views: dict[str, Mapping[str, Any]],
    *,
    now: datetime,
) -> _Member | None:
    """The run as a member of a group, or None when it must go alone."""
    if table is None or table.scp_rules:
        return None
    if now - run.updated_at >= timedelta(seconds=worker.env.stale_after_s / 2):
        return None  # its heartbeat is due first (``Worker``)
    definition = resolve_definition(run, table)
    if definition is None or frozen_problem(run, table) is not None:
        return None
    todo = []
    for position, action in pending_actions(action_list(definition), run.action_results):
        kind = action.get("type")
        if kind not in kinds:
            kinds[kind] = _transactional(kind)
        handler = kinds[kind]
        if handler is None:
            return None
        todo.append((position, action, handler))
    if not todo:
        return None
    if table.id not in views:
        views[table.id] = table.as_dict()
    return _Member(run, table, views[table.id], definition, todo)


def _transactional(kind: object) -> TransactionalAction | None:
    try:
        handler = get_action(kind)
    except ActionError:
        return None
    return handler if isinstance(handler, TransactionalAction) else None


def _write_group(worker: Worker, group: list[_Member], *, now: datetime) -> int:
    """Execute and finish ``group`` in one transaction (module docstring): how many of its runs
    were executed, those that had to go alone included."""
    total = len(group)
    alone: list[_Member] = []
    while group:
        write = partial(_commit, worker, group, now)
        try:
            worker.written(
                ("runs group", id(group)), partial(call_with_retries, write, worker.policy)
            )
        except _Alone as exc:
            alone.append(exc.member)
            group = [m for m in group if m is not exc.member]
        except _Lost as exc:
            group = [m for m in group if m.run.id not in exc.run_ids]
        except Exception as exc:
            if is_outage(exc):  # a stop while the database is out: left to the stale sweep
                raise
            log.warning("a group of %s runs failed (%s): each runs alone", len(group), exc)
            alone.extend(group)
            group = []
        else:
            break
    alone.sort(key=lambda m: (m.run.created_at, m.run.id))
    for member in alone:
        worker.execute(member.run, member.table, now=worker.time(now))
    return total


def _commit(worker: Worker, group: list[_Member], now: datetime) -> None:
    stamps: Callable[[], datetime] | None = worker.stamps or worker.clock
    done: list[FinishRow] = []
    with worker.env.store.begin(appends=True) as tx:
        for member in group:
            run, receipts = member.run, list(member.run.action_results)
            at = now
            for position, action, handler in member.todo:
                at = worker.time(now)
                ctx = worker.context(
                    run,
                    member.table,
                    member.definition,
                    action,
                    position,
                    now=at,
                    table_view=member.view,
                )
                timed = timed_receipt(stamps, at)
                try:
                    detail = handler.execute_in(tx, ctx, action)
                except Exception as exc:
                    if _for_the_group(exc):
                        raise
                    raise _Alone(member) from exc
                receipts = upsert_receipt(
                    receipts, timed(action.get("id"), handler.type, True, detail)
                )
            done.append(FinishRow(run.id, run.attempts, "done", at, json_text(receipts)))
        tx.flush()
        won = finish_runs(tx, rows=done)
        if len(won) < len(done):
            raise _Lost({row.run_id for row in done} - won)


def _for_the_group(exc: BaseException) -> bool:
    """An error the whole group is tried again for: a lock conflict or an outage."""
    return isinstance(exc, TransientStoreError) or is_transient(exc) or is_outage(exc)


__all__ = ["execute_batch"]
