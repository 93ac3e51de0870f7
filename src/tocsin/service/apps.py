"""Opening the facade for a process: ``--app`` / ``TOCSIN_APP`` workflows (synced on start) and
the lanes of a Tocsin it names."""

from __future__ import annotations

import importlib
from datetime import datetime

from tocsin.lanes.definition import Lane
from tocsin.service import Tocsin
from tocsin.service.lanes import Lanes
from tocsin.service.workflows import log_sync
from tocsin.settings import Settings
from tocsin.store import pools
from tocsin.workflows.loading import load_workflows


def open_with_app(settings: Settings, *, sync: bool = True) -> Tocsin:
    """The facade on ``settings``; with ``settings.app`` its workflows are registered and (unless
    ``sync=False``: the caller syncs at its own instant) their declared schedules synced (SPEC §12:
    on every start)."""
    workflows = load_workflows(settings.app) if settings.app else []
    lanes = load_lanes(settings.app) if settings.app else []
    facade = Tocsin.open(settings=settings, workflows=workflows, lanes=lanes)
    if settings.app and sync:
        try:
            sync_and_log(facade)
        except Exception:
            facade.close()
            raise
    return facade


def load_lanes(spec: str) -> list[Lane]:
    """The lanes registered on the Tocsin ``spec`` names (``Tocsin.open(url, lanes=[...])``);
    none for a workflow or a list of workflows. ``load_workflows`` imported it already."""
    module_name, _, attr = spec.partition(":")
    target: object = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    service = getattr(target, "lanes", None)
    return list(service.registered().values()) if isinstance(service, Lanes) else []


def sync_and_log(facade: Tocsin, now: datetime | None = None) -> dict[str, list[str]]:
    """A process's sync on start, on the ticker's pool: the schedules are the ticker's, and
    processes starting together wait for each other's sync longer than a request would."""
    with pools.bound(pools.TICKER):
        report = facade.sync_schedules(now=now)
    log_sync(report)
    return report


__all__ = ["load_lanes", "open_with_app", "sync_and_log"]
