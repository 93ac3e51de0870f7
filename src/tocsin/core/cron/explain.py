from __future__ import annotations

from tocsin.core.cron.spec import CronSpec


def explain(spec: CronSpec) -> str:
    return spec.expression
