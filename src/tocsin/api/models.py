"""Request bodies and response shapes of the HTTP API (DESIGN §4b).

Bodies forbid unknown fields (SPEC §15: unknown fields are 400/422, never 500). Responses allow
extra keys so the facade may grow fields without breaking the published schema.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    StrictBool,
    TypeAdapter,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from tocsin import messages

from .trigger_schema import DocumentedAs, Trigger, TriggerPatchDoc

ColumnType = Literal["text", "number", "boolean", "date", "datetime", "select", "json"]
RunStatus = Literal["pending", "running", "done", "failed", "stuck"]
Scope = Literal["chatroom", "workspace", "user"]


MAX_DEPTH = 64


def is_valid_unicode(text: str) -> bool:
    """False when ``text`` holds a lone surrogate (JSON's ``"\\ud800"`` escape decodes to one):
    no database, and no UTF-8 response, can carry it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_problem(text: str) -> str | None:
    if "\x00" in text:
        return messages.BODY_NUL
    return None if is_valid_unicode(text) else messages.BODY_SURROGATE


def body_problem(value: object, depth: int = 0) -> str | None:
    """Why a JSON body cannot be stored, or None: a NUL character in a string or key (PostgreSQL
    text refuses it), a lone surrogate (not Unicode), a non-finite number (JSON has none), or
    nesting deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return messages.body_too_deep(MAX_DEPTH)
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, float):
        return None if math.isfinite(value) else messages.BODY_NON_FINITE
    if isinstance(value, dict):
        items: list[object] = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    for item in items:
        problem = body_problem(item, depth + 1)
        if problem is not None:
            return problem
    return None


def _instant_text(value: object) -> object:
    """An instant in a body is ISO 8601 text: a JSON number (which pydantic would read as Unix
    seconds, so that ``-1`` meant 1969-12-31T23:59:59Z) is refused."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(messages.INSTANT_NOT_TEXT)
    return value


#: A body's instant: ISO 8601 text only (with or without an offset, as the route says).
Instant = Annotated[datetime, BeforeValidator(_instant_text)]
#: A body's instant that must carry its offset.
AwareInstant = Annotated[AwareDatetime, BeforeValidator(_instant_text)]


class Body(BaseModel):
    """A request body: unknown fields are refused, and so is anything no database column can
    hold (see :func:`body_problem`); both are 422."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        problem = body_problem(data)
        if problem is not None:
            raise ValueError(problem)
        return data


class TableCreate(Body):
    name: str = Field(min_length=1, max_length=200)
    columns: dict[str, ColumnType] = Field(default_factory=dict)
    requires_approval: StrictBool = False
    scp_rules: list[dict[str, Any]] | None = None


class RecordWrite(Body):
    data: dict[str, Any]


class TriggersPut(Body):
    triggers: Annotated[list[dict[str, Any]], DocumentedAs(list[Trigger])]


class TriggerPatch(Body):
    """A JSON Merge Patch of one trigger (any subset of its keys; ``null`` removes a key)."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(TypeAdapter(TriggerPatchDoc).core_schema)

    def patch(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class IacDocuments(Body):
    documents: list[dict[str, Any]]


class Out(BaseModel):
    """A response object: documented keys, extra keys allowed."""

    model_config = ConfigDict(extra="allow")


class TableOut(Out):
    id: str
    scope: str
    scope_id: str
    name: str
    columns: dict[str, str]
    trashed: bool


class RecordOut(Out):
    id: str
    table_id: str
    data: dict[str, Any]
    trashed: bool
    created_at: datetime
    updated_at: datetime


class RecordWritten(RecordOut):
    """A record create/update answer: the record, and ``warnings`` (e.g. a datetime cell whose
    UTC offset was ignored: cells are naive UTC, SPEC §4.1)."""

    warnings: list[str] = Field(default_factory=list)


class ActionReceipt(Out):
    """One action's receipt in ``action_results`` (SPEC §8), matched to its action by
    ``action_id`` (legacy receipts have none); an ``on_failure`` alert's too.
    ``started_at``/``ended_at``: when the action really started and ended (ISO 8601); receipts
    stored before they existed lack them."""

    action_id: str | None = None
    type: str
    ok: bool
    detail: str | None = None
    started_at: str | None = None
    ended_at: str | None = None


class RunOut(Out):
    id: str
    table_id: str
    trigger_id: str
    record_id: str | None
    source: str
    status: str
    attempts: int
    error: str | None
    action_results: Annotated[list[Any], DocumentedAs(list[ActionReceipt])]
    scheduled_for: datetime | None
    created_at: datetime
    updated_at: datetime
    next_attempt_at: datetime | None = None
    """A run waiting for an automatic retry (the trigger's ``retry`` policy): not before then."""
    dedup_key: str | None = None
    """A clock run's enqueue dedup key (SPEC §5.4): ``%Y%m%d`` (the local date of a zoned
    daily, the UTC date of a UTC daily) or ``%Y%m%dT%H%M`` (UTC, interval and cron)."""


class TriggersOut(Out):
    triggers: Annotated[list[dict[str, Any]], DocumentedAs(list[Trigger])]


class TriggerOut(Out):
    """One trigger, normalized, every id present (see ``Trigger`` for its shape)."""

    id: str
    on: str
    actions: list[dict[str, Any]]


class IacPlanOut(Out):
    """Per trigger: ``{"table", "trigger_id", "name", "action", "changes"}``; ``action`` is
    ``create``, ``update``, ``delete``, ``noop`` or ``invalid`` (apply would refuse it: then
    ``detail`` holds the refusal, its table and trigger named). ``adopted`` when adopted."""

    plan: list[dict[str, Any]]


class Page(BaseModel):
    """Every list answers ``{"items", "total", "skip", "limit"}``."""

    items: list[dict[str, Any]]
    total: int
    skip: int
    limit: int


class TickCounts(Out):
    tables_scanned: int
    tables_with_schedules: int
    runs_created: int
    trigger_runs_requeued: int
    staged_changes_requeued: int
    schedules_fired: int = 0
    lanes_fired: int = 0

    workflow_runs_requeued: int = 0
    lane_attempts_requeued: int = 0


class ErrorOut(BaseModel):
    detail: Any


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the error statuses a route may answer."""
    return {code: {"model": ErrorOut} for code in codes}


__all__ = [
    "ColumnType",
    "ErrorOut",
    "IacDocuments",
    "IacPlanOut",
    "Page",
    "RecordOut",
    "RecordWrite",
    "RecordWritten",
    "RunOut",
    "RunStatus",
    "Scope",
    "TableCreate",
    "TableOut",
    "TickCounts",
    "TriggerOut",
    "TriggerPatch",
    "TriggersOut",
    "TriggersPut",
    "error_responses",
]
