"""``tocsin lanes list|contracts|fires|next|pause|resume|verify`` (SPEC §14, §16).

- ``list``: registered lanes (``--app``) and every lane with a stored history;
- ``fires LANE``: its scheduled runs newest first (scheduled vs actual time, window start, run,
  attempt, status) with the skipped instants between them (``paused``, ``coalesced``…);
- ``next LANE``: the next instants its schedule runs at (``due``: a tick now runs it; none while
  paused), ``--at`` to look from another instant;
- ``pause LANE`` / ``resume LANE``: stop and restart its scheduled runs (persisted; the instants
  passed while paused are recorded ``paused`` and never run);
- ``requeue LANE ATTEMPT``: a pending (lost) or stale running attempt back to pending, for a
  worker with the lane (a failed run is retried with a new attempt: ``POST …/trigger`` kind
  ``retry``);
- ``contracts LANE``: a lane's attempts newest first (``--decision`` filters); ``--jsonl`` prints
  one contract document per line, the input ``verify`` reads;
- ``verify FILE``: reads a JSON Lines file of contracts (a bare document, or an attempt entry with
  ``contract`` and ``attempt``), recomputes each one's ``run_id`` and ``attempt_id`` and
  re-derives its decision; the first mismatch prints its line and field and exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from tocsin import messages
from tocsin.core.contract.lane import ContractMismatch
from tocsin.service.lanes import Lanes

from .processes import AppOpt, CreateOpt
from .render import (
    JsonOpt,
    Limit,
    Skip,
    facade,
    history_row,
    output,
    print_history,
    print_next,
    print_rows,
)
from .whynot import AtOpt, NOpt, _instant

lanes_app = typer.Typer(
    help="Lanes: list, contracts, fires, next, pause, resume, requeue, verify (run contracts,"
    " SPEC §14)."
)

LANE_COLUMNS = (
    "id",
    "registered",
    "cron",
    "timezone",
    "catch_up",
    "state",
    "policy_version",
    "attempts",
    "last",
)
FIRE_COLUMNS = ("scheduled_for", "fired_at", "window_start", "run_id", "attempt", "run_status")
ATTEMPT_COLUMNS = (
    "scheduled_for",
    "observed_at",
    "run_id",
    "attempt",
    "kind",
    "state",
    "decision",
    "handler",
)


@lanes_app.command("list")
def lanes_list(app: AppOpt = None, as_json: JsonOpt = False, create: CreateOpt = False) -> None:
    """Lanes: registered ones and those with a stored history."""
    with facade(app, create=create) as t:
        items = t.lanes.list()
    rows = [_lane_row(x) for x in items]
    title = messages.count_title(len(items), "lane")
    output({"items": items}, as_json, lambda: print_rows(title, LANE_COLUMNS, rows))


def _lane_row(lane: dict[str, Any]) -> dict[str, Any]:
    state = ("paused" if lane["paused"] else "active") if lane["cron"] else ""
    return {**lane, "state": state, "last": lane["last_decision"] or lane["last_state"]}


@lanes_app.command("pause")
def lanes_pause(lane_id: str, app: AppOpt = None, create: CreateOpt = False) -> None:
    """Stop the lane's scheduled runs (persisted; idempotent; a redeploy never unpauses)."""
    with facade(app, create=create) as t:
        lane = t.lanes.pause(lane_id)
    typer.echo(messages.paused_line(lane["id"]))


@lanes_app.command("resume")
def lanes_resume(lane_id: str, app: AppOpt = None, create: CreateOpt = False) -> None:
    """Run again from the next instant; the instants passed while paused never run."""
    with facade(app, create=create) as t:
        lane = t.lanes.resume(lane_id)
    typer.echo(messages.resumed_line(lane["id"], lane["next_fire_at"], lane=True))


@lanes_app.command("requeue")
def lanes_requeue(
    lane_id: str, attempt_id: str, app: AppOpt = None, create: CreateOpt = False
) -> None:
    """Send a pending (lost) or stale running attempt back to pending for a worker."""
    with facade(app, create=create) as t:
        attempt = t.lanes.requeue(lane_id, attempt_id)
    typer.echo(messages.requeued_line(attempt["attempt_id"], lane_id))


@lanes_app.command("fires")
def lanes_fires(
    lane_id: str,
    skip: Skip = 0,
    limit: Limit = 50,
    app: AppOpt = None,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The scheduled runs newest first, with the skipped instants between them (paged by the
    runs)."""
    with facade(app, create=create) as t:
        page = t.lanes.fires(lane_id, skip=skip, limit=limit)
    title = messages.lane_runs_title(page["total"], lane_id)
    print_history(page, as_json, title, FIRE_COLUMNS, _fire_row)


@lanes_app.command("next")
def lanes_next(
    lane_id: str,
    n: NOpt = 10,
    at: AtOpt = None,
    app: AppOpt = None,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The next instants the lane runs at (none while paused); the lane must be registered
    (--app)."""
    when = _instant(at)
    with facade(app, create=create) as t:
        out = t.lanes.next_fires(lane_id, n=n, now=when)
    print_next(out, as_json, messages.next_runs_title(lane_id))


def _fire_row(item: Mapping[str, Any]) -> dict[str, Any]:
    if item["kind"] == "fire":
        return {**item, "window_start": item["window"]["start_inclusive"]}
    return history_row(item)


def _attempt_row(item: dict[str, Any]) -> dict[str, Any]:
    decision = item["decision"]
    return {
        **item,
        "decision": f"{decision['status']} / {decision['reason']}" if decision else None,
        "handler": item["handler"]["status"],
    }


@lanes_app.command("contracts")
def lanes_contracts(
    lane_id: str,
    decision: Annotated[str | None, typer.Option("--decision")] = None,
    skip: Skip = 0,
    limit: Limit = 50,
    app: AppOpt = None,
    as_json: JsonOpt = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One contract per line.")] = False,
    create: CreateOpt = False,
) -> None:
    """A lane's attempts with their contracts, newest first."""
    with facade(app, create=create) as t:
        page = t.lanes.contracts(lane_id, skip=skip, limit=limit, decision=decision)
    if jsonl:
        for item in page["items"]:
            if item["contract"] is not None:
                typer.echo(json.dumps(item["contract"], ensure_ascii=False))
        return
    rows = [_attempt_row(i) for i in page["items"]]
    title = f"{page['total']} attempt(s) of {lane_id}"
    output(page, as_json, lambda: print_rows(title, ATTEMPT_COLUMNS, rows))


@lanes_app.command("verify")
def lanes_verify(
    path: Annotated[Path, typer.Argument(help="A JSON Lines file of contracts ('-': stdin).")],
) -> None:
    """Verify every contract of a JSON Lines file; exit 1 on the first mismatch."""
    text = typer.get_text_stream("stdin").read() if str(path) == "-" else _read(path)
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            Lanes.verify(json.loads(line))
        except json.JSONDecodeError as exc:
            typer.echo(messages.contract_line_not_json(number, exc.msg), err=True)
            raise typer.Exit(1) from None
        except ContractMismatch as exc:
            typer.echo(messages.contract_line_mismatch(number, exc.field, exc.detail), err=True)
            raise typer.Exit(1) from None
        count += 1
    typer.echo(messages.contracts_verified(count))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        typer.echo(f"error: {messages.file_unreadable(path, exc.strerror)}", err=True)
        raise typer.Exit(2) from None


__all__ = ["lanes_app"]
