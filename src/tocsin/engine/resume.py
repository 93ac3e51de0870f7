"""Resuming a paused schedule (a workflow schedule, a lane), one way.

A paused schedule holds ``paused_at`` (NULL: running); its pass claims it not. Resume is the
decision at ``now`` of its paused timing (:func:`tocsin.core.schedules.decide.decide`): every
instant it owed meanwhile is recorded in the skip ledger as ``paused`` and none of them fires;
the caller clears ``paused_at`` and writes the decision's ``next_due_at`` as its next fire (the
first regular instant after ``now``: no backlog).

A table clock trigger resumes through the same decision (:mod:`tocsin.engine.pause`), with what
its state row keeps besides (the consumed window, a date trigger's pause windows).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from tocsin.core.schedules.decide import Decision, State, Timing, decide
from tocsin.store import skips as store_skips
from tocsin.store.tx import Tx


def resume_decision(tx: Tx, timing: Timing, state: State, now: datetime) -> Decision:
    """The decision at ``now`` of ``timing`` paused, from ``state``, with its owed instants
    recorded as ``paused`` skips; the caller writes its next fire (``next_due_at``)."""
    decision = decide(replace(timing, paused=True), state, (), now)
    store_skips.record_skips(tx, ranges=list(decision.skips), now=now)
    return decision


__all__ = ["resume_decision"]
