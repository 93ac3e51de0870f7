"""Opening the facade for a process: ``--app`` / ``TOCSIN_APP`` workflows, synced on start."""

from __future__ import annotations

import logging
from datetime import datetime

from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.workflows.loading import load_workflows

log = logging.getLogger("tocsin.app")


def open_with_app(settings: Settings, *, sync: bool = True) -> Tocsin:
    """The facade on ``settings``; with ``settings.app`` its workflows are registered and (unless
    ``sync=False``: the caller syncs at its own instant) their declared schedules synced (SPEC §12:
    on every start)."""
    workflows = load_workflows(settings.app) if settings.app else []
    facade = Tocsin.open(settings=settings, workflows=workflows)
    if settings.app and sync:
        try:
            sync_and_log(facade)
        except Exception:
            facade.close()
            raise
    return facade


def sync_and_log(facade: Tocsin, now: datetime | None = None) -> dict[str, list[str]]:
    report = facade.sync_schedules(now=now)
    log.info("schedules synced", extra={f"schedules_{k}": len(v) for k, v in report.items()})
    return report


__all__ = ["open_with_app", "sync_and_log"]
