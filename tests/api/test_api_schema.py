"""Property-based API test against our own OpenAPI document (SPEC §15: never a 500).

Schemathesis generates requests for every operation of ``/openapi.json`` (positive and negative
data) with a moderator token and the admin token, and with the path pointing at a real table
of that tenant (and a real record and a failed run of it) so requests reach the handlers. Every
response must be non-5xx, use a documented status code and content type, and match its
documented schema. Bounded by ``max_examples`` to stay well under a minute per backend.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from api_support import ADMIN, Clock, Tenant
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tocsin.api.app import create_app
from tocsin.service import Tocsin
from tocsin.settings import Settings

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MAX_EXAMPLES = 15
# a run that fails at once (nothing listens on port 1; loopback is allowed in the test settings)
FAILING = {
    "name": "failing webhook",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 60},
    "actions": [{"type": "webhook", "url": "http://127.0.0.1:1/hook"}],
}


def load_schema() -> Any:
    """The OpenAPI document of the app; its content does not depend on the database."""
    facade = Tocsin.open("sqlite://", settings=Settings(database_url="sqlite://"))
    try:
        return schemathesis.openapi.from_asgi("/openapi.json", create_app(tocsin=facade))
    finally:
        facade.close()


@pytest.fixture
def target(tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]) -> dict[str, Any]:
    """Where generated requests point: the tenant's scope, its live table, a live record of it
    and a failed run of it, so record and run routes reach their handlers (and their answers
    are checked against the schema) instead of stopping at a 404."""
    record = tocsin.insert_record(table["id"], {"Title": "fuzz"}, now=clock.now)
    tocsin.set_triggers(table["id"], [FAILING], now=clock.now)
    tocsin.tick(now=clock.now)
    tocsin.work(now=clock.now)
    (run,) = tocsin.list_runs(table["id"], now=clock.now)["items"]
    return {
        "path": {
            "scope": "chatroom",
            "scope_id": tenant.scope_id,
            "chatroom_id": tenant.scope_id,
            "table_id": table["id"],
            "record_id": record["id"],
            "run_id": run["id"],
        },
        "headers": {**tenant.moderator, **ADMIN},
    }


# loaded at import (schemathesis' fixture-based lazy loader does not support pytest 9); the
# requests go to the per-test ``app`` below, on the backend of the test
schema = load_schema()


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_response_is_a_5xx_or_off_schema(
    case: Any, app: FastAPI, target: dict[str, Any]
) -> None:
    if case.path_parameters:
        for name, value in target["path"].items():
            if name in case.path_parameters:
                case.path_parameters[name] = value
    case.call_and_validate(app=app, headers=target["headers"], checks=CHECKS)
