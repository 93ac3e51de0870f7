"""``tocsin schedules list|show|create|pause|resume|fires`` and ``tocsin workflows list|start|runs``
(SPEC §12, §16), printed as Rich tables (``--json`` for machines)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from tocsin import messages

from .processes import AppOpt, CreateOpt
from .render import JsonOpt, Limit, Skip, facade, output, print_history, print_rows

schedules_app = typer.Typer(help="Workflow schedules: list, show, create, pause, resume, fires.")
workflows_app = typer.Typer(help="Workflows: list, start, runs.")

SCHEDULE_COLUMNS = ("id", "workflow_id", "cron", "timezone", "next_fire_at", "paused", "last")
# one schedule: since when it is paused too (empty while it runs)
SHOW_COLUMNS = (*SCHEDULE_COLUMNS[:-1], "paused_at", SCHEDULE_COLUMNS[-1])
FIRE_COLUMNS = ("scheduled_for", "fired_at", "run_id", "publish_status", "run_status", "error")
RUN_COLUMNS = ("id", "workflow_id", "trigger", "status", "started_at", "duration_ms", "error")


def _schedule_row(s: dict[str, Any]) -> dict[str, Any]:
    last = s.get("last_fire") or {}
    return {**s, "last": last.get("run_status") or last.get("publish_status")}


@schedules_app.command("list")
def schedules_list(
    workflow: Annotated[str | None, typer.Option("--workflow")] = None,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """All schedules (--workflow filters)."""
    with facade(create=create) as t:
        page = t.schedules.list(workflow_id=workflow, skip=skip, limit=limit)
    rows = [_schedule_row(s) for s in page["items"]]
    title = messages.count_title(page["total"], "schedule")
    output(page, as_json, lambda: print_rows(title, SCHEDULE_COLUMNS, rows))


@schedules_app.command("show")
def schedules_show(schedule_id: str, as_json: JsonOpt = False, create: CreateOpt = False) -> None:
    """One schedule with its last fire; a compound trigger in words with each latch."""
    with facade(create=create) as t:
        sched = t.schedules.get(schedule_id)

    def render() -> None:
        print_rows(sched["id"], SHOW_COLUMNS, [_schedule_row(sched)])
        trigger = sched.get("trigger")
        if trigger is not None:
            typer.echo(messages.trigger_line(trigger["description"]))
            for line in latch_lines(trigger["tree"]):
                typer.echo(f"  {line}")

    output(sched, as_json, render)


def latch_lines(node: dict[str, Any]) -> list[str]:
    """One line per leaf of an annotated trigger tree: its latch or its next instant."""
    for op in ("all", "any"):
        if op in node:
            return [line for child in node[op] for line in latch_lines(child)]
    if "cron" in node:
        return [f"[{node['path']}] cron {node['cron']} ({node['timezone']}): next {node['next']}"]
    since = node.get("latched_since")
    state = f"latched since {since}" if since is not None else "waiting"
    subject = next(v for k, v in node.items() if k.endswith("_id"))
    return [f"[{node['path']}] {node['event']} {subject}: {state}"]


TriggerOpt = Annotated[
    str | None,
    typer.Option(
        "--trigger", help='A compound trigger as JSON, e.g. {"any": [...]}; @file reads a file.'
    ),
]


@schedules_app.command("create")
def schedules_create(
    workflow: Annotated[str, typer.Option("--workflow", help="A workflow of the app.")],
    cron: Annotated[str | None, typer.Option("--cron")] = None,
    trigger: TriggerOpt = None,
    timezone: Annotated[str | None, typer.Option("--timezone")] = None,
    input_json: Annotated[str | None, typer.Option("--input", help="inputData as JSON.")] = None,
    overlap: Annotated[str, typer.Option("--overlap")] = "skip",
    app: AppOpt = None,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """Create an imperative schedule: --cron or a --trigger tree (SPEC §13)."""
    tree = _json_arg("--trigger", trigger)
    data = _json_arg("--input", input_json)
    with facade(app, create) as t:
        sched = t.schedules.create(
            workflow_id=workflow,
            cron=cron,
            trigger=tree,
            timezone=timezone,
            input_data=data,
            overlap=overlap,  # type: ignore[arg-type]
        )
    for note in sched.get("warnings") or []:
        typer.echo(messages.cli_warning(note), err=True)
    created = messages.schedule_created_line(sched["id"], sched["next_fire_at"])
    output(sched, as_json, lambda: typer.echo(created))


def _json_arg(name: str, text: str | None) -> Any:
    if text is None:
        return None
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as handle:
            text = handle.read()
    try:
        return json.loads(text)
    except ValueError as exc:
        typer.echo(f"error: {messages.option_not_json(name, exc)}", err=True)
        raise typer.Exit(2) from None


@schedules_app.command("pause")
def schedules_pause(schedule_id: str, create: CreateOpt = False) -> None:
    """Stop firing (persisted; idempotent; a redeploy never unpauses)."""
    with facade(create=create) as t:
        sched = t.schedules.pause(schedule_id)
    typer.echo(messages.paused_line(sched["id"]))


@schedules_app.command("resume")
def schedules_resume(schedule_id: str, create: CreateOpt = False) -> None:
    """Fire again from the next regular instant (no backlog)."""
    with facade(create=create) as t:
        sched = t.schedules.resume(schedule_id)
    typer.echo(messages.resumed_line(sched["id"], sched["next_fire_at"]))


@schedules_app.command("fires")
def schedules_fires(
    schedule_id: str,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The fire history, newest first, with the skipped occurrences between the fires (paged by
    the fires); --json prints the page of fires alone, as before."""
    with facade(create=create) as t:
        page = t.schedules.fires(schedule_id, skip=skip, limit=limit)
        history = t.schedules.history(schedule_id, skip=skip, limit=limit) if not as_json else {}
    title = messages.fires_title(page["total"], schedule_id)
    print_history(history or {"items": []}, as_json, title, FIRE_COLUMNS, data=page)


WORKFLOW_COLUMNS = ("id", "code", "steps", "schedules", "runs", "description")


@workflows_app.command("list")
def workflows_list(app: AppOpt = None, as_json: JsonOpt = False, create: CreateOpt = False) -> None:
    """The workflows the database knows (from their schedules and runs) and those of --app (or
    TOCSIN_APP), each with its schedules and runs; says which have no code loaded here."""
    with facade(app, create) as t:
        items = list(t.schedules.workflows().values())
    missing = sum(not w["code_loaded"] for w in items)

    def render() -> None:
        rows = [_workflow_row(w) for w in items]
        print_rows(messages.count_title(len(items), "workflow"), WORKFLOW_COLUMNS, rows)
        if missing:
            typer.echo(messages.workflows_code_not_loaded(missing))

    output(items, as_json, render)


def _workflow_row(w: dict[str, Any]) -> dict[str, Any]:
    steps = w["steps"]
    return {
        **w,
        "code": "loaded" if w["code_loaded"] else "not loaded",
        "steps": len(steps) if steps is not None else "",
        "schedules": ", ".join(w["schedules"]),
    }


@workflows_app.command("start")
def workflows_start(
    workflow_id: str,
    app: AppOpt = None,
    input_json: Annotated[str, typer.Option("--input", help="The input as JSON.")] = "null",
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Run it now.")] = True,
    create: CreateOpt = False,
) -> None:
    """Start a workflow of --app; prints the run as JSON."""
    try:
        data = json.loads(input_json)
    except ValueError as exc:
        typer.echo(f"error: {messages.input_not_json(exc)}", err=True)
        raise typer.Exit(2) from None
    with facade(app, create) as t:
        run = t.start_workflow(workflow_id, data, wait=wait)
    typer.echo(json.dumps(run, default=str))


@workflows_app.command("runs")
def workflows_runs(
    workflow_id: Annotated[
        str | None, typer.Argument(help="Only this workflow's runs (as --workflow).")
    ] = None,
    workflow: Annotated[str | None, typer.Option("--workflow", help="Only this workflow.")] = None,
    status: Annotated[str | None, typer.Option(help="pending|running|success|failed|…")] = None,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """Workflow runs, newest first: all of them, or one workflow's (WORKFLOW_ID or --workflow)."""
    if workflow_id is not None and workflow is not None and workflow_id != workflow:
        typer.echo(f"error: {messages.workflow_given_twice(workflow_id, workflow)}", err=True)
        raise typer.Exit(2)
    with facade(create=create) as t:
        page = t.workflow_runs(
            workflow_id=workflow_id or workflow, status=status, skip=skip, limit=limit
        )
    title = messages.count_title(page["total"], "run")
    output(page, as_json, lambda: print_rows(title, RUN_COLUMNS, page["items"]))


__all__ = ["schedules_app", "workflows_app"]
