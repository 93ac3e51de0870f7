"""tocsin.core.time.cron — parse, evaluate and explain cron expressions (SPEC §4.4, §13).

Pure: no clock, no I/O. ``parse`` validates once into a :class:`CronSpec`; ``next_after`` /
``prev_at_or_before`` / ``iter_after`` evaluate it in an IANA zone under a DST policy
(gap wall times never fire; fold wall times fire on the first occurrence, or on both);
``explain`` renders it in plain English.
"""

from __future__ import annotations

from tocsin.core.time.cron.evaluate import (
    MAX_SEARCH_YEARS,
    Repeated,
    iter_after,
    next_after,
    prev_at_or_before,
)
from tocsin.core.time.cron.explain import explain
from tocsin.core.time.cron.parse import collapse_separators, parse
from tocsin.core.time.cron.spec import CronError, CronSpec, Dialect

__all__ = [
    "MAX_SEARCH_YEARS",
    "CronError",
    "CronSpec",
    "Dialect",
    "Repeated",
    "collapse_separators",
    "explain",
    "iter_after",
    "next_after",
    "parse",
    "prev_at_or_before",
]
