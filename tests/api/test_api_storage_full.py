"""A database with no room left: writes answer 507 with the exact text, ``/readyz`` 503, and
both recover by themselves once space is freed.

SQLite: the database is capped with ``TOCSIN_SQLITE_MAX_BYTES`` (the setting) and filled by
the test's own connection (``support.storage.Filler``). PostgreSQL: a disk cannot be filled
here; a trigger on ``records`` raises the server's own ``disk_full`` (SQLSTATE 53100), which
comes back through psycopg exactly as "could not extend file" does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import Tenant, TestClient, table_url

from support.storage import CAP_BYTES, Filler
from tocsin import messages
from tocsin.service import Tocsin
from tocsin.settings import Settings

ADMIN_TOKEN = "admin-secret"
BIG = {"data": {"Title": "x" * 20_000}}  # needs new pages wherever it goes


@pytest.fixture
def backend() -> str:
    return "sqlite"  # (the PostgreSQL test below is parametrized over it)


@pytest.fixture
def settings(store_url: str) -> Settings:
    return Settings(database_url=store_url, admin_token=ADMIN_TOKEN, sqlite_max_bytes=CAP_BYTES)


@pytest.fixture
def disk(store_url: str) -> Iterator[Filler]:
    filler = Filler(store_url)
    yield filler
    filler.close()


def test_a_full_database_answers_507_and_readyz_503_until_space_is_freed(
    client: TestClient, tenant: Tenant, table: dict[str, Any], disk: Filler
) -> None:
    records = table_url(tenant, table, "/records")
    assert client.get("/readyz").status_code == 200
    disk.fill()

    refused = client.post(records, json=BIG, headers=tenant.moderator)
    assert refused.status_code == 507, refused.text
    assert refused.json() == {"detail": messages.STORAGE_FULL}
    assert refused.json() == {
        "detail": "storage full: the database cannot grow; free space and retry"
    }
    not_ready = client.get("/readyz")
    assert not_ready.status_code == 503
    assert not_ready.json() == {"detail": messages.STORAGE_FULL}
    assert client.get("/readyz").status_code == 503  # still full: still not ready
    assert client.get("/healthz").status_code == 200  # alive all along
    listed = client.get(records, headers=tenant.moderator)
    assert listed.status_code == 200 and listed.json()["total"] == 0  # nothing half-written

    disk.free()
    assert client.get("/readyz").status_code == 200
    created = client.post(records, json=BIG, headers=tenant.moderator)
    assert created.status_code == 201, created.text


DISK_FULL_ON_INSERT = """
CREATE FUNCTION refuse_for_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
END $$;
CREATE TRIGGER refuse_for_disk_full BEFORE INSERT ON records
  FOR EACH ROW EXECUTE FUNCTION refuse_for_disk_full();
"""


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])
def test_postgresql_disk_full_answers_507(
    client: TestClient, tenant: Tenant, table: dict[str, Any], tocsin: Tocsin
) -> None:
    with tocsin.store.begin() as tx:
        tx.conn.exec_driver_sql(DISK_FULL_ON_INSERT)
    refused = client.post(table_url(tenant, table, "/records"), json=BIG, headers=tenant.moderator)
    assert refused.status_code == 507, refused.text
    assert refused.json() == {"detail": messages.STORAGE_FULL}
