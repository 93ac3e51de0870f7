"""Run now: one manual run of a table trigger, at once.

The one decision with a manual event (:func:`tocsin.engine.evaluate.manual_decision`): the
trigger fires once at ``now`` whatever its timing or pause, and nothing of its state moves. Its
own ledger namespace: the identity is ``manual:<run id>`` (never a window or record identity), so
it never consumes a scheduled occurrence; the run is not a clock run (the one-active-run fence of
SPEC §5.3 does not count it), so it never blocks the next scheduled occurrence either.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.engine import fire
from tocsin.engine.evaluate import inspect_stored, manual_decision
from tocsin.engine.ids import uuid7
from tocsin.errors import NotFound, ValidationError
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.tx import Store

MANUAL_PREFIX = "manual:"


def run_trigger_now(
    store: Store, *, table_id: str, trigger_id: str, now: datetime
) -> dict[str, Any]:
    """Insert one pending manual run of ``trigger_id``; the run's dict."""
    with store.begin() as tx:
        table = store_records.get_table(tx, table_id=table_id)
        if table is None:
            raise NotFound(messages.TABLE_NOT_FOUND)
        states = store_state.get_states(tx, table_id=table_id)
        live = {tid for tid, s in states.items() if not s.retired}
        found = [
            t
            for t in inspect_stored(table.triggers, table.columns, live)
            if t.trigger_id == trigger_id
        ]
        if not found:
            raise NotFound(messages.TRIGGER_NOT_FOUND)
        if not found[0].valid:
            raise ValidationError(messages.TRIGGER_INVALID_NO_FIRES)
        [at] = manual_decision(found[0], states[trigger_id], now=now).fires
        run_id = uuid7(now)
        identity = MANUAL_PREFIX + run_id
        new = store_runs.NewRun(
            id=run_id,
            table_id=table_id,
            trigger_id=trigger_id,
            record_id=None,
            source="manual",
            clock=False,
            payload={},
            definition=None,
            identity=identity,
            scheduled_for=at,
            definition_hash=states[trigger_id].definition_hash,
        )

        def write(claimed: list[int]) -> list[str]:
            if claimed:  # always: the identity names this new run
                store_runs.insert_runs(tx, runs_=[new], now=now)
            return []

        fire.fire(tx, [(table_id, trigger_id, identity, run_id)], write, now=now)
        run = store_runs.get_run(tx, run_id=run_id)
    assert run is not None
    return run.as_dict()


__all__ = ["MANUAL_PREFIX", "run_trigger_now"]
