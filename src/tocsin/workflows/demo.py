"""The demo workflow of ``make run`` (``tocsin demo``): two code-declared schedules, one firing
every minute, so fires and runs appear within the demo's first minute (SPEC §12)."""

from __future__ import annotations

from pydantic import BaseModel

from tocsin.workflows.definition import Schedule, step, workflow
from tocsin.workflows.execute import StepContext


class DigestIn(BaseModel):
    window: str


class Digest(BaseModel):
    window: str
    text: str


class Delivered(BaseModel):
    delivered: bool
    text: str


@step(id="compose", input=DigestIn, output=Digest)
def compose(data: DigestIn, ctx: StepContext) -> Digest:
    at = (ctx.scheduled_for or ctx.now).isoformat()
    return Digest(window=data.window, text=f"{data.window} digest for {at}")


@step(id="deliver", input=Digest, output=Delivered)
def deliver(data: Digest, ctx: StepContext) -> Delivered:
    return Delivered(delivered=True, text=data.text)


WORKFLOWS = [
    workflow(
        id="demo-digest",
        input=DigestIn,
        output=Delivered,
        description="Composes and delivers a digest: every minute, and every morning at 09:00 UTC",
        schedule=[
            Schedule(
                id="every-minute",
                cron="* * * * *",
                timezone="UTC",
                input_data={"window": "minute"},
                metadata={"demo": True},
            ),
            Schedule(
                id="morning",
                cron="0 9 * * *",
                timezone="UTC",
                input_data={"window": "morning"},
                metadata={"demo": True},
            ),
        ],
    )
    .then(compose)
    .then(deliver)
    .commit()
]
