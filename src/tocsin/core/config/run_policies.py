"""The checks of the ``retry``, ``on_failure`` and ``timeout_s`` a workflow, schedule, step or
lane declares in code (SPEC §12, §14). Pure; each raises ``ConfigError`` naming its owner.

- ``retry``: the keys and bounds of a table trigger's ``"retry"`` (``core.retry_policy``);
- ``on_failure``: a list of actions checked as a trigger's alerts (recordless), or a callable
  that takes the failed run. Declared in code, the actions are trusted: they carry no tenant
  token, so one reaching app code (``start_workflow``, ``invoke_command``) is never refused by
  the tenant rule of ``core.exposure``;
- ``timeout_s``: seconds above 0, at most a day.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from tocsin import messages
from tocsin.core.config.triggers import validate_alerts
from tocsin.core.schedules.retry import retry_problem
from tocsin.errors import ConfigError

MAX_TIMEOUT_S = 86400.0
Alerts = list[dict[str, Any]] | Callable[[dict[str, Any]], Any]


def checked_retry(owner: str, raw: object, code: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    problem = retry_problem(raw)
    if problem is not None or not isinstance(raw, Mapping):
        reason = problem or messages.RETRY_NOT_OBJECT
        raise ConfigError(messages.run_policy_invalid(owner, reason), code=code)
    return dict(raw)


def checked_alerts(owner: str, raw: object, code: str) -> Alerts | None:
    if raw is None:
        return None
    if callable(raw):
        return raw
    if not isinstance(raw, list | tuple):
        raise ConfigError(messages.on_failure_invalid(owner, raw), code=code)
    try:
        return validate_alerts(list(raw))
    except ConfigError as exc:
        raise ConfigError(messages.run_policy_invalid(owner, exc.detail), code=code) from None


def checked_timeout(owner: str, raw: object, code: str) -> float | None:
    if raw is None:
        return None
    ok = type(raw) in (int, float) and math.isfinite(raw) and 0 < raw <= MAX_TIMEOUT_S  # type: ignore[arg-type,operator]
    if not ok:
        raise ConfigError(messages.timeout_s_invalid(owner, raw), code=code)
    return float(raw)  # type: ignore[arg-type]


__all__ = ["MAX_TIMEOUT_S", "Alerts", "checked_alerts", "checked_retry", "checked_timeout"]
