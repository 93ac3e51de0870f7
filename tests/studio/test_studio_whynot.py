"""Why-not in Studio (both backends, no browser): a schedule's skipped occurrences interleaved
with its fires in one history (paged by the fires), its next fires, and per table trigger its
recent skips and next fires."""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from support.settings import with_settings
from tocsin.api.app import create_app
from tocsin.core.schedules.skips import COALESCED, SCHEDULE, TRIGGER, SkipRange
from tocsin.service import Tocsin
from tocsin.store import skips as store_skips

from .conftest import CHAT, FIRST, SECOND
from .studio_app import WORKFLOWS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SYNCED = datetime(2026, 12, 1, tzinfo=UTC)
THIRD = datetime(2029, 1, 1, 0, 0, 5, tzinfo=UTC)
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


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def _rows(html: str) -> list[str]:
    """The skip rows' text (history rows or a trigger card's list), tags stripped, in order."""
    items = re.findall(r"<(li|tr)[^>]* data-skip-reason=[^>]*>(.*?)</\1>", html, re.S)
    return [_text(i) for _, i in items]


def _history(html: str) -> list[str]:
    """The history rows in page order: ``fire <scheduled for>`` or the skip row's text."""
    rows = re.findall(r"<tr (data-fire-id|class=\"skip\")[^>]*>(.*?)</tr>", html, re.S)
    return [
        "fire " + re.findall(r"<time datetime='([^']+)'", body)[0] if kind == "data-fire-id"
        else _text(body)
        for kind, body in rows
    ]  # fmt: skip


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
        "skipped 10,079 occurrences 2026-11-23 09:01:00 UTC … 2026-11-30 08:59:00 UTC — coalesced"
        " (downtime: the latest missed instant fired instead)",
    ]
    assert "<time datetime='2027-01-01T00:00:00Z' title='2027-01-01 00:00:00 UTC'>" in page
    panel = client.get(f"/workflows/schedules/{sid}/fires").text
    assert _rows(panel) == rows and "<html" not in panel  # the polled panel keeps them


COALESCED_2028 = "skipped 1,440 occurrences 2028-05-01 00:00:00 UTC … 2028-05-01 23:59:00 UTC — coalesced (downtime: the latest missed instant fired instead)"  # noqa: E501


def _fires_around_a_pause(t: Tocsin, sid: str) -> None:
    """Fires in 2027 and 2029, paused over 2028 (one ``paused`` skip), and three coalesced
    ranges: one between the fires, one newer than both, one older than both."""
    t.tick(now=FIRST)
    t.schedules.pause(sid, now=FIRST)
    t.tick(now=SECOND)
    t.schedules.resume(sid, now=SECOND + timedelta(hours=1))
    t.tick(now=THIRD)
    may, newest, oldest = (
        datetime(y, m, 1, tzinfo=UTC) for y, m in ((2028, 5), (2030, 3), (2020, 1))
    )
    ranges = [
        SkipRange(SCHEDULE, sid, COALESCED, may, may + timedelta(minutes=1439), 1440),
        SkipRange(SCHEDULE, sid, COALESCED, newest, newest + timedelta(minutes=1), 2),
        SkipRange(SCHEDULE, sid, "active_run", oldest, oldest, 1),
    ]  # fmt: skip
    with t.store.begin() as tx:
        store_skips.record_skips(tx, ranges=ranges, now=THIRD)


HISTORY = [
    "skipped 2 occurrences 2030-03-01 00:00:00 UTC … 2030-03-01 00:01:00 UTC — coalesced"
    " (downtime: the latest missed instant fired instead)",
    "fire 2029-01-01T00:00:00Z",
    COALESCED_2028,
    "skipped 2028-01-01 00:00:00 UTC — paused",
    "fire 2027-01-01T00:00:00Z",
    "skipped 2020-01-01 00:00:00 UTC — a run was still active (overlap skip)",
]


def test_skips_are_interleaved_with_the_fires_by_time(client: TestClient, t: Tocsin) -> None:
    sid = "wf_nightly"
    _fires_around_a_pause(t, sid)
    assert t.schedules.fires(sid)["total"] == 2
    page = client.get(f"/workflows/schedules/{sid}").text
    assert _history(page) == HISTORY  # fire, skips, fire in time order; a range at its last
    assert 'id="skips"' not in page and "skip ledger" not in page  # no panel beside the fires
    assert "No fires yet" not in page
    panel = client.get(f"/workflows/schedules/{sid}/fires").text
    assert _history(panel) == HISTORY and "<html" not in panel  # the polled panel: the same
    assert f'/workflows/schedules/{sid}/fires?page=1"' in panel


@with_settings(studio_fires_per_page=1)  # TOCSIN_STUDIO_FIRES_PER_PAGE (20 by default)
def test_the_interleaved_history_keeps_the_fires_paging(client: TestClient, t: Tocsin) -> None:
    """Paged by the fires: each page shows the skips of its share of time (down to its oldest
    fire; the first page also the newer ones, the last page also the older ones), so every
    range shows once across the pages."""
    sid = "wf_nightly"
    _fires_around_a_pause(t, sid)
    url = f"/workflows/schedules/{sid}"
    first, second = (client.get(url, params={"page": p}).text for p in (1, 2))
    assert _history(first) == HISTORY[:2] and "page 1 of 2 · 2 fires" in first
    assert _history(second) == HISTORY[2:] and "page 2 of 2 · 2 fires" in second
    assert f'href="{url}?page=2"' in first
    assert _history(client.get(url, params={"page": 3}).text) == []  # past the end: nothing
    assert client.get(url, params={"page": 0}).status_code == 422
    # the facade pages the same way (one fire a page; a skip item has the ledger's fields)
    pages = [t.schedules.history(sid, skip=s, limit=1) for s in (0, 1, 2)]
    assert [[i["kind"] for i in p["items"]] for p in pages] == [
        ["skip", "fire"],
        ["skip", "skip", "fire", "skip"],
        [],
    ]
    assert pages[1]["items"][1] == {
        "kind": "skip",
        "reason": "paused",
        "first_instant": "2028-01-01T00:00:00",
        "last_instant": "2028-01-01T00:00:00",
        "count": 1,
        "count_is_lower_bound": False,
    }
    assert {p["total"] for p in pages} == {2} and pages[0]["skips_left_off"] == 0


def test_the_schedule_page_lists_its_next_fires_and_none_while_paused(
    client: TestClient, t: Tocsin
) -> None:
    sid = "wf_nightly"
    page = client.get(f"/workflows/schedules/{sid}").text
    block = page.split('id="next-fires"')[1].split("</dd>")[0]
    assert block.count('data-status="scheduled"') == 5
    years = re.findall(r"<time datetime='(\d{4})-01-01T00:00:00Z'", block)
    assert years == sorted(years) and len(set(years)) == 5  # a yearly schedule, in order
    assert _rows(page) == [] and "No fires yet" in page
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
    assert _rows(card)[0].startswith("skipped 10,079 occurrences 2026-11-23 09:01:00 UTC")
    assert len(_rows(card)) == 5 and "(5 newest of 7 ranges" in card
    nxt = re.findall(r"<time datetime='([^']+)'", card.split("Next fires:")[1].split("</ol>")[0])
    assert len(nxt) == 5
    steps = [datetime.fromisoformat(a.replace("Z", "+00:00")) for a in nxt]
    assert {b - a for a, b in itertools.pairwise(steps)} == {timedelta(hours=1)}
    other = page.split('data-trigger-id="trg_new"')[1].split("</article>")[0]
    assert "Next fires" not in other and "skipped" not in other
