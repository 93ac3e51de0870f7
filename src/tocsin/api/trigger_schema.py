"""Documentation models of a trigger (SPEC §3–§4, §10), for the OpenAPI schema only.

Requests are still validated by ``tocsin.core.config.triggers.validate_triggers``: its 400 texts are
the SPEC's exact words, and strict Pydantic parsing would answer 422 with other words. So the bodies
keep their free-form type for parsing, and :class:`DocumentedAs` makes the schema of such a field
the schema of these models instead: discriminated unions on ``schedule.type`` and action
``type``. A test validates the README's trigger examples against the published schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from tocsin import messages

Id = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$",
        description="kept when sent; assigned when omitted",
    ),
]
Text = Annotated[
    str,
    Field(
        min_length=1,
        description="a template: $row.<column>, $row.id, $trigger.id, $run.id, $run.scheduled_for",
    ),
]
Zone = Annotated[
    str, Field(description="an IANA zone name (absent = UTC)", examples=["Asia/Taipei"])
]
Seconds = Annotated[
    float, Field(gt=0, description="total deadline; capped by TOCSIN_ACTION_TIMEOUT_MAX_S")
]


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- schedules (SPEC §4), discriminated by "type" ----
class DateColumnReached(Doc):
    """Fires once per record value when cell + offset_minutes <= now (SPEC §4.1)."""

    type: Literal["date_column_reached"]
    column: str = Field(description="a date or datetime column; cells are naive UTC")
    offset_minutes: int = Field(0, ge=-43200, le=43200, description="negative = before")


class Interval(Doc):
    """Every ``every_seconds`` from the save (SPEC §4.2); recordless."""

    type: Literal["interval"]
    every_seconds: int = Field(ge=60, le=2592000)


class Daily(Doc):
    """Once a day at local ``at`` (SPEC §4.3); recordless."""

    type: Literal["daily"]
    at: str = Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", examples=["01:30"])
    timezone: Zone | None = None


class CronScheduleDoc(Doc):
    """Strict five-field cron (SPEC §4.4); recordless, takes no ``when``."""

    type: Literal["cron"]
    expression: str = Field(examples=["0 9 * * 1-5"])
    timezone: Zone | None = None


ScheduleDoc = Annotated[
    DateColumnReached | Interval | Daily | CronScheduleDoc, Field(discriminator="type")
]


class Predicate(Doc):
    """One ``when`` predicate; a trigger's predicates combine with AND (SPEC §3)."""

    column: str
    op: Literal["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "is_empty", "is_not_empty"]
    value: Any = None


# ---- actions (SPEC §10), discriminated by "type" ----
OWN_HEADERS = f"not the headers tocsin sets ({messages.RESERVED_HEADERS}, in any case)"


class Notify(Doc):
    id: Id | None = None
    type: Literal["notify"]
    message: Text
    chatroom_id: str | None = Field(None, description="only the table's own chatroom")


class Webhook(Doc):
    id: Id | None = None
    type: Literal["webhook"]
    url: Text
    method: Literal["POST", "PUT", "PATCH"] | None = Field(None, description="default POST")
    payload: Any = None
    headers: dict[str, str] | None = Field(None, description=OWN_HEADERS)
    timeout_s: Seconds | None = None


class ApiCall(Doc):
    id: Id | None = None
    type: Literal["api_call"]
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    url: Text
    headers: dict[str, str] | None = Field(None, description=OWN_HEADERS)
    body: Any = None
    timeout_s: Seconds | None = None


class CreateRecord(Doc):
    id: Id | None = None
    type: Literal["create_record"]
    values: dict[str, Any]
    table_id: str | None = Field(None, description="default: the trigger's table")


class UpdateRecord(Doc):
    id: Id | None = None
    type: Literal["update_record"]
    record: Text = Field(description="'$row' or a record id")
    values: dict[str, Any]
    table_id: str | None = None


class DeleteRecord(Doc):
    id: Id | None = None
    type: Literal["delete_record"]
    record: Text = Field(description="'$row' or a record id")
    table_id: str | None = None


class InvokeCommand(Doc):
    id: Id | None = None
    type: Literal["invoke_command"]
    command: Text
    inputs: dict[str, Any] | None = None


class MaterializeSlots(Doc):
    """Daily schedules only."""

    id: Id | None = None
    type: Literal["materialize_slots"]
    source_table_id: Text
    horizon_days: int = Field(ge=1, le=366)
    target_table_id: str | None = None
    capacity_column: str | None = None
    weekday_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    slot_minutes_column: str | None = None


class StartWorkflow(Doc):
    id: Id | None = None
    type: Literal["start_workflow"]
    workflow_id: Text
    input: Any = None


ActionDoc = Annotated[
    Notify
    | Webhook
    | ApiCall
    | CreateRecord
    | UpdateRecord
    | DeleteRecord
    | InvokeCommand
    | MaterializeSlots
    | StartWorkflow,
    Field(discriminator="type"),
]


class RetryPolicy(Doc):
    """Automatic retries of a failed run, resuming at the failed action (docs/guide.md)."""

    max_attempts: int = Field(ge=1, le=25)
    backoff_s: float | None = Field(None, gt=0)
    factor: float | None = Field(None, ge=1)
    max_backoff_s: float | None = Field(None, ge=0)
    jitter: bool | None = None


class Trigger(Doc):
    """A trigger (SPEC §3): a row event or a schedule, optional ``when``, its actions."""

    id: Id | None = None
    name: str | None = None
    on: Literal["created", "updated", "deleted", "restored", "schedule"]
    when: list[Predicate] | None = None
    schedule: ScheduleDoc | None = Field(None, description="required when on = 'schedule'")
    actions: list[ActionDoc]
    retry: RetryPolicy | None = None
    on_failure: list[ActionDoc] | None = Field(
        None, description="run once when the run finally fails; $run.error is its error"
    )


class TriggerPatchDoc(Doc):
    """A JSON Merge Patch (RFC 7396) of one trigger: any subset of its keys; ``null`` removes."""

    id: Id | None = None
    name: str | None = None
    on: Literal["created", "updated", "deleted", "restored", "schedule"] | None = None
    when: list[Predicate] | None = None
    schedule: dict[str, Any] | None = Field(None, description="merged into the schedule")
    actions: list[ActionDoc] | None = None
    retry: RetryPolicy | None = None
    on_failure: list[ActionDoc] | None = None


TRIGGER = TypeAdapter(Trigger)
TRIGGER_LIST = TypeAdapter(list[Trigger])


class DocumentedAs:
    """``Annotated[<parsed type>, DocumentedAs(<doc type>)]``: parse as the first, publish the
    JSON schema of the second (its models land in the OpenAPI components)."""

    def __init__(self, doc: Any) -> None:
        self.doc = TypeAdapter(doc)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(self.doc.core_schema)


__all__ = ["TRIGGER", "TRIGGER_LIST", "DocumentedAs", "Trigger", "TriggerPatchDoc"]
