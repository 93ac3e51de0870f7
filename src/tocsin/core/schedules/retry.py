"""The automatic-retry policy of every kind of run (SPEC §9 extended). Pure.

The one place a next attempt is computed: a table trigger's ``"retry"``, and the ``retry=`` of
``workflow``, ``Schedule``, ``step`` and ``Lane`` (same keys, same checks, same delays).

Opt in per trigger with ``"retry": {"max_attempts": 5, "backoff_s": 30, "factor": 2,
"max_backoff_s": 3600, "jitter": true}``; only ``max_attempts`` is required, the others default
to the values shown. The object is stored as written (no default is filled in, so IaC plans of
an authored document stay byte-stable, SPEC §11).

``max_attempts`` counts every attempt, the first included: with 3, a run whose action keeps
failing is tried three times and then ``failed``. After failed attempt *n* (n < max_attempts) the
run goes back to ``pending`` with ``next_attempt_at = now + delay(n)``::

    delay(n) = min(backoff_s × factor^(n-1), max_backoff_s)

With ``jitter`` the delay is scaled into ``[delay/2, delay]`` by a fraction derived from the
run id and the attempt number (SHA-256), so the same run and attempt always wait the same time
(tests are never flaky) while runs failing together spread out. The delay is applied rounded
to the millisecond.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tocsin import messages
from tocsin.errors import ConfigError

MAX_ATTEMPTS_LIMIT = 25
MAX_BACKOFF_LIMIT_S = 7 * 86400
MAX_FACTOR = 10
RETRY_KEYS = ("max_attempts", "backoff_s", "factor", "max_backoff_s", "jitter")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int
    backoff_s: float = 30.0
    factor: float = 2.0
    max_backoff_s: float = 3600.0
    jitter: bool = True

    def delay_s(self, attempt: int, run_id: str) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based) of run ``run_id``."""
        exponent = max(attempt - 1, 0)
        try:
            raw = self.backoff_s * self.factor**exponent
        except OverflowError:
            raw = math.inf
        delay = min(raw, self.max_backoff_s)
        if self.jitter:
            delay *= 0.5 + 0.5 * jitter_fraction(run_id, attempt)
        return delay

    def next_attempt_at(self, attempt: int, run_id: str, now: datetime) -> datetime | None:
        """When attempt ``attempt + 1`` may start, or None when the attempts are spent."""
        if attempt >= self.max_attempts:
            return None
        return now + timedelta(milliseconds=round(self.delay_s(attempt, run_id) * 1000))


def jitter_fraction(run_id: str, attempt: int) -> float:
    """A fraction in ``[0, 1)`` fixed by the run id and the attempt number."""
    digest = hashlib.sha256(f"{run_id}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def retry_problem(raw: object) -> str | None:
    """Why ``raw`` is not a usable ``retry`` object (the text naming the bad key and value),
    or None. Every kind's policy (trigger, workflow, schedule, step, lane) is checked here."""
    if not isinstance(raw, Mapping):
        return messages.RETRY_NOT_OBJECT
    unknown = sorted(str(k) for k in raw if k not in RETRY_KEYS)
    if unknown:
        return messages.config_keys_unknown("retry", unknown, RETRY_KEYS)
    attempts = raw.get("max_attempts")
    if type(attempts) is not int or not 1 <= attempts <= MAX_ATTEMPTS_LIMIT:
        return messages.retry_max_attempts_invalid(MAX_ATTEMPTS_LIMIT, attempts)
    backoff = raw.get("backoff_s", 30)
    if not _number(backoff) or not 0 < backoff <= MAX_BACKOFF_LIMIT_S:
        return messages.retry_backoff_invalid(MAX_BACKOFF_LIMIT_S, backoff)
    factor = raw.get("factor", 2)
    if not _number(factor) or not 1 <= factor <= MAX_FACTOR:
        return messages.retry_factor_invalid(MAX_FACTOR, factor)
    cap = raw.get("max_backoff_s", 3600)
    if not _number(cap) or not backoff <= cap <= MAX_BACKOFF_LIMIT_S:
        return messages.retry_max_backoff_invalid(MAX_BACKOFF_LIMIT_S, cap)
    jitter = raw.get("jitter", True)
    if not isinstance(jitter, bool):
        return messages.retry_jitter_invalid(jitter)
    return None


def validate_retry(raw: object) -> dict[str, Any]:
    """The ``retry`` object as written, or ``ConfigError`` naming the bad key and value."""
    problem = retry_problem(raw)
    if problem is not None or not isinstance(raw, Mapping):
        raise _error(problem or messages.RETRY_NOT_OBJECT)
    return dict(raw)


def policy_of(raw: object) -> RetryPolicy | None:
    """The policy a ``retry`` object describes, or None (absent, or not usable)."""
    if raw is None or retry_problem(raw) is not None:
        return None
    assert isinstance(raw, Mapping)
    return RetryPolicy(
        max_attempts=raw["max_attempts"],
        backoff_s=float(raw.get("backoff_s", 30)),
        factor=float(raw.get("factor", 2)),
        max_backoff_s=float(raw.get("max_backoff_s", 3600)),
        jitter=raw.get("jitter", True),
    )


def retry_policy(trigger: Mapping[str, Any]) -> RetryPolicy | None:
    """The policy of a stored trigger definition, or None (no ``retry``, or not usable)."""
    return policy_of(trigger.get("retry"))


def as_written(policy: RetryPolicy) -> dict[str, Any]:
    """Every key of ``policy``, defaults filled in (what a run shows as the policy in force)."""
    return {
        "max_attempts": policy.max_attempts,
        "backoff_s": policy.backoff_s,
        "factor": policy.factor,
        "max_backoff_s": policy.max_backoff_s,
        "jitter": policy.jitter,
    }


def _error(reason: str) -> ConfigError:
    return ConfigError(messages.trigger_invalid(reason), code="trigger_invalid")


__all__ = [
    "RETRY_KEYS",
    "RetryPolicy",
    "as_written",
    "jitter_fraction",
    "policy_of",
    "retry_policy",
    "retry_problem",
    "validate_retry",
]
