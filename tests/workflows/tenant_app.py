"""An app with one workflow tenants may start from a trigger (``greet``, ``tenants=True``) and one
they may not (``admin-purge``): what ``tocsin serve --app workflows.tenant_app:WORKFLOWS`` and
the tenant-reach tests register."""

from __future__ import annotations

from pydantic import BaseModel

from tocsin import StepContext, step, workflow
from tocsin.workflows import Workflow


class Who(BaseModel):
    user_id: str


class Done(BaseModel):
    ok: bool
    user_id: str


@step(id="greet", input=Who, output=Done)
def greet(data: Who, ctx: StepContext) -> Done:
    return Done(ok=True, user_id=data.user_id)


@step(id="purge", input=Who, output=Done)
def purge(data: Who, ctx: StepContext) -> Done:
    return Done(ok=True, user_id=data.user_id)  # stands for an admin-only effect


def make_greet(*, tenants: bool = True) -> Workflow:
    return workflow(id="greet", input=Who, output=Done, tenants=tenants).then(greet).commit()


def make_purge(*, tenants: bool = False) -> Workflow:
    return workflow(id="admin-purge", input=Who, output=Done, tenants=tenants).then(purge).commit()


WORKFLOWS = [make_greet(), make_purge()]
