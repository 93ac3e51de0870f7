"""A table trigger's schedule spec (``ScheduleSpec``): validation (SPEC §4) and omit-when-default
normalisation (§4.5).

Four kinds, each a frozen value. Time semantics per kind:

- ``DateColumnReached``: fire instant = naive-UTC cell + ``offset_minutes`` (saturating at the
  datetime bounds); no timezone and so no DST at all (§4.1).
- ``Interval``: windows ``anchor + n × every_seconds`` in absolute time; DST is irrelevant (§4.2).
- ``Daily``: one slot per local date at wall time ``at`` in ``timezone`` (UTC when absent).
  Gap and fold both resolve with ``fold=0`` (the pre-transition offset): a spring-forward slot
  fires late by the gap, a fall-back slot fires at its first occurrence; never skipped, never
  doubled (§4.3).
- ``CronSchedule``: the strict dialect, evaluated in ``timezone`` with ``repeated="first"``: a
  nonexistent local minute never fires, a repeated one fires once, at its first occurrence (§4.4).

``parse_schedule`` raises ``ConfigError`` with the SPEC text and the §7 code of the first problem;
``schedule_problems`` returns every problem (the preview lists all codes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import time
from typing import Any, ClassVar, Literal, TypeGuard

from tocsin import messages
from tocsin.core.time import cron
from tocsin.core.time.zones import canonical_zone, get_zone
from tocsin.errors import ConfigError

SCHEDULE_TYPES = ("date_column_reached", "interval", "daily", "cron")
CLOCK_KINDS = frozenset({"interval", "daily", "cron"})
DATE_COLUMN_TYPES = frozenset({"date", "datetime"})
OFFSET_LIMIT = 43200
INTERVAL_MIN_S = 60
INTERVAL_MAX_S = 2592000

_ALLOWED_KEYS: dict[str, tuple[str, ...]] = {
    "date_column_reached": ("type", "column", "offset_minutes"),
    "interval": ("type", "every_seconds"),
    "daily": ("type", "at", "timezone"),
    "cron": ("type", "expression", "timezone"),
}
_HH_MM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])", re.ASCII)


@dataclass(frozen=True, slots=True, kw_only=True)
class DateColumnReached:
    """Fires once per record value when ``cell + offset_minutes <= now`` (SPEC §4.1)."""

    kind: ClassVar[Literal["date_column_reached"]] = "date_column_reached"
    column: str
    offset_minutes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """Table-level windows ``anchor + n × every_seconds`` (SPEC §4.2)."""

    kind: ClassVar[Literal["interval"]] = "interval"
    every_seconds: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Daily:
    """One slot per local date at ``at`` in ``timezone`` (None = UTC), fold=0 (SPEC §4.3)."""

    kind: ClassVar[Literal["daily"]] = "daily"
    at: time
    timezone: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CronSchedule:
    """Strict five-field cron in ``timezone`` (None = UTC), repeated="first" (SPEC §4.4)."""

    kind: ClassVar[Literal["cron"]] = "cron"
    expression: str
    timezone: str | None = None
    spec: cron.CronSpec


ScheduleSpec = DateColumnReached | Interval | Daily | CronSchedule
ClockSchedule = Interval | Daily | CronSchedule


def is_int(value: object) -> TypeGuard[int]:
    """An integer that is not a boolean (``True`` must not pass as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def normalize_schedule(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Omit-when-default (SPEC §4.5); idempotent, never raises, never validates.

    ``offset_minutes: 0`` (a real integer, not ``False``) and ``timezone: "UTC"`` on daily/cron
    are dropped (a known zone written in another case is spelled as IANA does first); a cron
    expression has its whitespace runs collapsed. Everything else is kept.
    """
    out = dict(raw)
    kind = out.get("type")
    offset = out.get("offset_minutes")
    if kind == "date_column_reached" and is_int(offset) and offset == 0:
        del out["offset_minutes"]
    zone = out.get("timezone")
    if kind in ("daily", "cron") and isinstance(zone, str) and (canonical := canonical_zone(zone)):
        out["timezone"] = canonical  # any case of a known zone names it
    if kind in ("daily", "cron") and out.get("timezone") == "UTC":
        del out["timezone"]
    if kind == "cron" and isinstance(out.get("expression"), str):
        out["expression"] = cron.collapse_separators(out["expression"])
    return out


def parse_schedule(raw: object, columns: Mapping[str, str]) -> ScheduleSpec:
    """Validate a raw schedule against the table's ``{column: type}``; first problem raises."""
    problems: list[ConfigError] = []
    result = _parse(raw, columns, problems)
    if problems or result is None:
        raise problems[0]
    return result


def schedule_problems(raw: object, columns: Mapping[str, str]) -> list[ConfigError]:
    """Every problem of a raw schedule (empty when valid); never raises."""
    problems: list[ConfigError] = []
    _parse(raw, columns, problems)
    return problems


def schedule_to_dict(s: ScheduleSpec) -> dict[str, Any]:
    """The normalised JSON form (defaults omitted), ``type`` first."""
    if isinstance(s, DateColumnReached):
        out: dict[str, Any] = {"type": s.kind, "column": s.column}
        if s.offset_minutes:
            out["offset_minutes"] = s.offset_minutes
        return out
    if isinstance(s, Interval):
        return {"type": s.kind, "every_seconds": s.every_seconds}
    if isinstance(s, Daily):
        out = {"type": s.kind, "at": s.at.strftime("%H:%M")}
    else:
        out = {"type": s.kind, "expression": s.expression}
    if s.timezone is not None:
        out["timezone"] = s.timezone
    return out


def _parse(
    raw: object, columns: Mapping[str, str], problems: list[ConfigError]
) -> ScheduleSpec | None:
    if raw is None:
        problems.append(
            ConfigError(messages.SCHEDULE_OBJECT_MISSING, code="schedule_object_missing")
        )
        return None
    if not isinstance(raw, Mapping):
        detail = messages.schedule_not_object(raw)
        problems.append(ConfigError(detail, code="stored_schedule_invalid"))
        return None
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in SCHEDULE_TYPES:
        detail = messages.invalid_schedule_type(kind)
        problems.append(ConfigError(detail, code="unsupported_schedule_type"))
        return None
    body = normalize_schedule(raw)
    allowed = _ALLOWED_KEYS[kind]
    unknown = sorted(str(k) for k in body if k not in allowed)
    if unknown:
        detail = messages.schedule_unknown_keys(kind, unknown, list(allowed))
        problems.append(ConfigError(detail, code="stored_schedule_invalid"))
    before = len(problems)
    if kind == "date_column_reached":
        result: ScheduleSpec | None = _date_column(body, columns, problems)
    elif kind == "interval":
        result = _interval(body, problems)
    elif kind == "daily":
        result = _daily(body, problems)
    else:
        result = _cron(body, problems)
    return result if len(problems) == before and not unknown else None


def _date_column(
    body: Mapping[str, Any], columns: Mapping[str, str], problems: list[ConfigError]
) -> DateColumnReached | None:
    column = body.get("column")
    offset = body.get("offset_minutes", 0)
    ok = True
    if not isinstance(column, str) or column not in columns:
        detail = messages.with_columns(messages.schedule_column_missing(column), columns)
        problems.append(ConfigError(detail, code="schedule_column_missing"))
        ok = False
    elif columns[column] not in DATE_COLUMN_TYPES:
        detail = messages.schedule_column_wrong_type(column, columns[column])
        problems.append(ConfigError(detail, code="schedule_column_wrong_type"))
        ok = False
    if not is_int(offset) or not -OFFSET_LIMIT <= offset <= OFFSET_LIMIT:
        problems.append(ConfigError(messages.OFFSET_MINUTES_INVALID, code="offset_minutes_invalid"))
        ok = False
    if not ok or not isinstance(column, str):
        return None
    return DateColumnReached(column=column, offset_minutes=offset)


def _interval(body: Mapping[str, Any], problems: list[ConfigError]) -> Interval | None:
    every = body.get("every_seconds")
    if not is_int(every) or not INTERVAL_MIN_S <= every <= INTERVAL_MAX_S:
        detail = messages.INTERVAL_SECONDS_INVALID
        problems.append(ConfigError(detail, code="interval_seconds_invalid"))
        return None
    return Interval(every_seconds=every)


def _daily(body: Mapping[str, Any], problems: list[ConfigError]) -> Daily | None:
    at = body.get("at")
    match = _HH_MM.fullmatch(at) if isinstance(at, str) else None
    if match is None:
        problems.append(ConfigError(messages.daily_time_invalid(at), code="daily_time_invalid"))
    timezone = _timezone(body, problems)
    if match is None or timezone is False:
        return None
    wall = time(int(match.group(1)), int(match.group(2)))
    return Daily(at=wall, timezone=timezone)


def _cron(body: Mapping[str, Any], problems: list[ConfigError]) -> CronSchedule | None:
    expression = body.get("expression")
    spec: cron.CronSpec | None = None
    if not isinstance(expression, str):
        detail = messages.cron_invalid(messages.CRON_EXPRESSION_NOT_STRING)
        problems.append(ConfigError(detail, code="cron_expression_invalid"))
    else:
        try:
            spec = cron.parse(expression, dialect="strict")
        except ConfigError as exc:
            problems.append(exc)
    timezone = _timezone(body, problems)
    if spec is None or timezone is False:
        return None
    return CronSchedule(expression=spec.expression, timezone=timezone, spec=spec)


def _timezone(body: Mapping[str, Any], problems: list[ConfigError]) -> str | Literal[False] | None:
    """The validated timezone (None = UTC), or False after recording the problem."""
    if "timezone" not in body:
        return None
    name = body["timezone"]
    try:
        get_zone(name)
    except ConfigError as exc:
        problems.append(exc)
        return False
    canonical = canonical_zone(str(name)) or str(name)  # any case of a known zone is accepted
    return None if canonical == "UTC" else canonical


__all__ = [
    "CLOCK_KINDS",
    "DATE_COLUMN_TYPES",
    "SCHEDULE_TYPES",
    "ClockSchedule",
    "CronSchedule",
    "Daily",
    "DateColumnReached",
    "Interval",
    "ScheduleSpec",
    "is_int",
    "normalize_schedule",
    "parse_schedule",
    "schedule_problems",
    "schedule_to_dict",
    "zone_name",
]


def zone_name(s: Daily | CronSchedule) -> str:
    """The IANA name a daily/cron schedule is evaluated in."""
    return s.timezone or "UTC"
