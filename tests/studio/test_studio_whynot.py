"""Issue 17 in Studio (both backends, no browser): a schedule's skip ledger beside its fire
history (paginated on its own), its next fires, and per table trigger its recent skips and next
fires."""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tocsin.api.app import create_app
from tocsin.core.skips import COALESCED, SCHEDULE, TRIGGER, SkipRange
from tocsin.service import Tocsin
from tocsin.store import skips as store_skips

from .conftest import CHAT, FIRST
from .studio_app import WORKFLOWS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SYNCED = datetime(2026, 12, 1, tzinfo=UTC)
WEEK_START = datetime(2026, 11, 23, 9, 1, tzinfo=UTC)


@pytest.fixture
def t(tocsin: Tocsin) -> Tocsin:
    tocsin.register_workflows(WORKFLOWS)
    tocsin.sync_schedules(now=SYNCED)
    return tocsin


@pytest.fixture
def client(t: Tocsin) -> Iterator[TestClient]:
    with TestClient(create_app(tocsin=t), follow_redirects=False) as http:
        http.get("/login", params={"token": _moderator(t)})
        yield http


def _moderator(t: Tocsin) -> str:
    return t.create_token(
        scope="chatroom", scope_id=CHAT, role="moderator", permissions=["schedules:write"]
    )


def _rows(html: str) -> list[str]:
    """The skip rows' text, tags stripped, in page order."""
    items = re.findall(r"<li data-skip-reason=[^>]*>(.*?)</li>", html, re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", i).split()) for i in items]


def _week(target_kind: str, target_id: str, table_id: str | None = None) -> SkipRange:
    last = WEEK_START + timedelta(minutes=10_078)
    return SkipRange(target_kind, target_id, COALESCED, WEEK_START, last, 10_079, None, False,
                     table_id)  # fmt: skip


def test_a_paused_instant_and_a_range_show_in_the_schedules_history(
    client: TestClient, t: Tocsin
) -> None:
    sid = "wf_nightly"
    t.schedules.pause(sid, now=SYNCED)
    t.tick(now=FIRST)  # the other schedules fire; this one is paused
    assert t.schedules.fires(sid)["total"] == 0
    t.schedules.resume(sid, now=FIRST + timedelta(hours=1))
    with t.store.begin() as tx:
        store_skips.record_skips(tx, ranges=[_week(SCHEDULE, sid)], now=SYNCED)
    page = client.get(f"/workflows/schedules/{sid}").text
    rows = _rows(page)
    assert rows == [  # newest first
        "skipped 2027-01-01 00:00:00 UTC — paused",
        "skipped 10,079 instants 2026-11-23 09:01:00 UTC … 2026-11-30 08:59:00 UTC — coalesced"
        " (downtime: the latest missed instant fired instead)",
    ]
    assert "<time datetime='2027-01-01T00:00:00Z' title='2027-01-01 00:00:00 UTC'>" in page
    panel = client.get(f"/workflows/schedules/{sid}/fires").text
    assert _rows(panel) == rows and "<html" not in panel  # the polled panel keeps them


def test_skips_are_paginated_apart_from_the_fires(client: TestClient, t: Tocsin) -> None:
    sid = "wf_nightly"
    base = datetime(2020, 1, 1, tzinfo=UTC)
    ranges = [  # 45 ranges, alternating reasons so none merges
        SkipRange(
            SCHEDULE,
            sid,
            ("paused", "active_run")[i % 2],
            base + timedelta(days=i),
            base + timedelta(days=i),
            1,
        )
        for i in range(45)
    ]
    with t.store.begin() as tx:
        store_skips.record_skips(tx, ranges=ranges, now=SYNCED)
    first = client.get(f"/workflows/schedules/{sid}").text
    assert len(_rows(first)) == 20 and "page 1 of 3 · 45 skip ranges" in first
    assert _rows(first)[0].startswith("skipped 2020-02-14 00:00:00 UTC")  # the newest
    assert f'href="/workflows/schedules/{sid}?skips=2"' in first
    last = client.get(f"/workflows/schedules/{sid}", params={"skips": 3, "page": 1}).text
    assert len(_rows(last)) == 5 and _rows(last)[-1].startswith("skipped 2020-01-01 00:00:00")
    panel = client.get(f"/workflows/schedules/{sid}/fires", params={"skips": 2}).text
    assert len(_rows(panel)) == 20 and 'fires?page=1&amp;skips=2"' in panel  # polls its page
    assert client.get(f"/workflows/schedules/{sid}", params={"skips": 0}).status_code == 422


def test_the_schedule_page_lists_its_next_fires_and_none_while_paused(
    client: TestClient, t: Tocsin
) -> None:
    sid = "wf_nightly"
    page = client.get(f"/workflows/schedules/{sid}").text
    block = page.split('id="next-fires"')[1].split("</dd>")[0]
    assert block.count('data-status="scheduled"') == 5
    years = re.findall(r"<time datetime='(\d{4})-01-01T00:00:00Z'", block)
    assert years == sorted(years) and len(set(years)) == 5  # a yearly schedule, in order
    assert "Nothing skipped" in page
    t.schedules.pause(sid, now=SYNCED)
    paused = client.get(f"/workflows/schedules/{sid}").text
    block = paused.split('id="next-fires"')[1].split("</dd>")[0]
    assert "none while paused" in block and "<time" not in block


def test_a_table_trigger_shows_its_recent_skips_and_next_fires(
    client: TestClient, t: Tocsin
) -> None:
    table = t.create_table(
        scope="chatroom", scope_id=CHAT, name="Hourly", columns={"Title": "text"}, now=SYNCED
    )
    notify = [{"type": "notify", "message": "hi"}]
    hourly = {"type": "interval", "every_seconds": 3600}
    t.set_triggers(
        table["id"],
        [
            {"id": "trg_hourly", "on": "schedule", "schedule": hourly, "actions": notify},
            {"id": "trg_new", "on": "created", "actions": notify},
        ],
        now=SYNCED,
    )
    base = datetime(2020, 1, 1, tzinfo=UTC)
    ranges = [_week(TRIGGER, "trg_hourly", table["id"])] + [
        SkipRange(
            TRIGGER,
            "trg_hourly",
            "paused",
            base + timedelta(hours=i),
            base + timedelta(hours=i),
            1,
            None,
            False,
            table["id"],
        )
        for i in range(0, 12, 2)
    ]
    with t.store.begin() as tx:
        store_skips.record_skips(tx, ranges=ranges, now=SYNCED)
    page = client.get(f"/tables/{table['id']}").text
    card = page.split('data-trigger-id="trg_hourly"')[1].split("</article>")[0]
    assert _rows(card)[0].startswith("skipped 10,079 instants 2026-11-23 09:01:00 UTC")
    assert len(_rows(card)) == 5 and "(5 newest of 7 ranges" in card
    nxt = re.findall(r"<time datetime='([^']+)'", card.split("Next fires:")[1].split("</ol>")[0])
    assert len(nxt) == 5
    steps = [datetime.fromisoformat(a.replace("Z", "+00:00")) for a in nxt]
    assert {b - a for a, b in itertools.pairwise(steps)} == {timedelta(hours=1)}
    other = page.split('data-trigger-id="trg_new"')[1].split("</article>")[0]
    assert "Next fires" not in other and "skipped" not in other
