"""A write's row is stored once, however many triggers it fires (SPEC §8 row snapshot).

A table with 100 ``created`` triggers and a few ~255 KB records: the database grows by about
one copy of each record per write (the record itself, its snapshot), not one per run; a page of
500 runs leaves the rows out, the single run has its row, and ``$row`` templates still render.
"""

from __future__ import annotations

import secrets
from typing import Any

from api_support import NOW, Tenant, TestClient, table_url
from sqlalchemy import text

from tocsin.service import Tocsin

TRIGGERS = 100
WRITES = 5
NOTES_CHARS = 255_000  # hex: incompressible enough that PostgreSQL's TOAST stores it as is
MIB = 1024 * 1024
LATER = NOW.replace(second=59)


def database_bytes(tocsin: Tocsin) -> int:
    """SQLite: the database's pages (its file's size once checkpointed). PostgreSQL: every
    relation of the test's schema, indexes and TOAST included."""
    with tocsin.store.read() as tx:
        if tx.is_postgres:
            sizes = (
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c"
                " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
            )
            return int(tx.conn.execute(text(sizes)).scalar_one())
        pages = tx.conn.execute(text("PRAGMA page_count")).scalar_one()
        return int(pages) * int(tx.conn.execute(text("PRAGMA page_size")).scalar_one())


def make_table(client: TestClient, tenant: Tenant) -> dict[str, Any]:
    body = {"name": "Big rows", "columns": {"Title": "text", "Notes": "text"}}
    resp = client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator)
    assert resp.status_code == 201, resp.text
    table: dict[str, Any] = resp.json()
    notify = {"type": "notify", "message": "$trigger.id saw $row.Title ($row.id)"}
    triggers = [{"id": f"trg_{i}", "on": "created", "actions": [notify]} for i in range(TRIGGERS)]
    url = table_url(tenant, table, "/triggers")
    resp = client.put(url, json={"triggers": triggers}, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    return table


def test_a_write_firing_100_triggers_stores_its_row_once_and_a_runs_page_stays_small(
    client: TestClient, tocsin: Tocsin, tenant: Tenant
) -> None:
    table = make_table(client, tenant)
    before = database_bytes(tocsin)
    records = []
    for n in range(WRITES):
        data = {"Title": f"row {n}", "Notes": secrets.token_hex(NOTES_CHARS // 2)}
        resp = client.post(
            table_url(tenant, table, "/records"), json={"data": data}, headers=tenant.moderator
        )
        assert resp.status_code == 201, resp.text
        records.append(resp.json())
    grown = database_bytes(tocsin) - before
    written = WRITES * NOTES_CHARS
    # the record and one snapshot per write, plus 500 small runs (one copy per run: ~100x)
    assert grown < 3 * written, f"grew {grown} bytes for {written} bytes of records"

    resp = client.get(
        table_url(tenant, table, "/trigger-runs"),
        params={"limit": 500},
        headers=tenant.moderator,
    )
    assert resp.status_code == 200, resp.text
    assert len(resp.content) <= MIB, len(resp.content)
    page = resp.json()
    assert page["total"] == len(page["items"]) == TRIGGERS * WRITES
    assert not [run for run in page["items"] if "payload" in run]

    by_id = {record["id"]: record for record in records}
    newest = page["items"][0]
    url = table_url(tenant, table, f"/trigger-runs/{newest['id']}")
    run = client.get(url, headers=tenant.moderator).json()
    record = by_id[run["record_id"]]
    assert run["payload"] == {"id": record["id"], "data": record["data"]}

    assert tocsin.work(now=LATER, limit=3) == 3  # $row renders from the shared snapshot
    feed = client.get(f"{tenant.prefix}/messages", headers=tenant.member).json()["items"]
    first = records[0]
    assert {m["text"] for m in feed} == {f"trg_{i} saw row 0 ({first['id']})" for i in range(3)}, (
        feed
    )
