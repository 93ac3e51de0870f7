"""Studio's schedule pages for compound triggers (SPEC §13), both backends: the tree
in words with each event leaf's latch ("waiting" / "satisfied since …"), its time leaves with
their zone, DST policy and next instant, the whole tree's next instant and "satisfied now", and
the list's summary in words. The page's clock is the app's ``studio_clock``; events and ticks
go through the facade with an explicit ``now``."""

from __future__ import annotations

import html
import re
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tocsin import AllOf, AnyOf, Cron, Schedule, TableUpdated, WorkflowSucceeded, workflow
from tocsin.api.app import create_app
from tocsin.core.schedules.tree import Node
from tocsin.service import Tocsin
from tocsin.studio.tree_words import tree_summary

from .conftest import CHAT
from .studio_app import send_report

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

T0 = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)  # a Monday
EVENT_AT = datetime(2026, 3, 2, 7, 10, tzinfo=UTC)
NINE_BERLIN = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 09:00 CET
SID = "wf_watch"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def table_id(tocsin: Tocsin) -> str:
    made = tocsin.create_table("chatroom", str(uuid.uuid4()), "Orders", {"N": "number"}, now=T0)
    return str(made["id"])


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(tocsin: Tocsin, clock: Clock) -> Iterator[TestClient]:
    app = create_app(tocsin=tocsin)
    app.state.studio_clock = clock
    with TestClient(app, follow_redirects=False) as http:
        token = tocsin.create_token(
            scope="chatroom", scope_id=CHAT, role="member", permissions=["schedules:read"]
        )
        assert http.get("/login", params={"token": token}).status_code == 303
        yield http


def define(t: Tocsin, tree: Node, tz: str = "UTC") -> None:
    sched = Schedule(trigger=tree, timezone=tz, overlap="allow")
    wf = workflow(id="watch", schedule=sched).then(send_report).commit()
    t.register_workflows([wf])
    t.sync_schedules(now=T0)


def tree_section(page: str) -> str:
    found = re.search(r'<section class="trigger".*?</section>', page, re.S)
    assert found is not None, "no Trigger section"
    return html.unescape(re.sub(r"\s+", " ", found.group(0)))


def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


def test_and_of_cron_and_table_updated_latches_then_resets(
    tocsin: Tocsin, client: TestClient, clock: Clock, table_id: str
) -> None:
    define(tocsin, AllOf(Cron("0 9 * * *", timezone="Europe/Berlin"), TableUpdated(table_id)))
    section = tree_section(client.get(f"/workflows/schedules/{SID}").text)
    words = text_of(section)
    assert "ALL of:" in words and "ANY of:" not in words
    assert "At 09:00 every day (Europe/Berlin)" in words
    assert "fires twice" in words and "never fires" in words  # repeated=both, missing=skip
    assert "table Orders updated waiting" in words
    assert f'href="/tables/{table_id}"' in section
    assert "satisfied since" not in words
    # the whole tree's next instant: 09:00 in Berlin is 08:00 UTC (CET, UTC+1)
    could = re.search(r'id="could-fire">(.*?)</dd>', section)
    assert could is not None and "2026-03-02 08:00:00 UTC" in could.group(1)
    satisfied = re.search(r'id="satisfied-now">(.*?)</dd>', section)
    assert satisfied is not None and ">no<" in satisfied.group(1)

    tocsin.insert_record(table_id, {"N": 1}, now=EVENT_AT)
    assert tocsin.tick(now=EVENT_AT)["schedules_fired"] == 0  # the tick latches the event
    clock.now = EVENT_AT
    words = text_of(tree_section(client.get(f"/workflows/schedules/{SID}").text))
    assert "table Orders updated satisfied since 2026-03-02 07:10:00 UTC" in words
    assert "waiting" not in words

    assert tocsin.tick(now=NINE_BERLIN)["schedules_fired"] == 1
    clock.now = NINE_BERLIN
    words = text_of(tree_section(client.get(f"/workflows/schedules/{SID}").text))
    assert "table Orders updated waiting" in words  # every latch reset by the fire
    assert "satisfied since" not in words


def test_any_of_renders_each_leaf_and_the_list_summary(
    tocsin: Tocsin, client: TestClient, table_id: str
) -> None:
    tree = AnyOf(
        Cron("30 1 * * *", timezone="America/New_York", repeated="first", missing="shift"),
        TableUpdated(table_id),
    )
    define(tocsin, tree)
    section = tree_section(client.get(f"/workflows/schedules/{SID}").text)
    words = text_of(section)
    assert "ANY of:" in words and "ALL of:" not in words
    assert "At 01:30 every day (America/New_York)" in words
    assert "fires once, the first time" in words and "first valid instant after the gap" in words
    # 01:30 EST on 2026-03-03 is 06:30 UTC: the leaf's and the tree's next instant
    assert words.count("2026-03-03 06:30:00 UTC") >= 2
    assert "table Orders updated waiting" in words

    listing = client.get("/workflows/schedules").text
    row = re.search(rf'<tr data-schedule-id="{SID}">.*?</tr>', listing, re.S)
    assert row is not None
    cells = html.unescape(text_of(row.group(0)))
    assert "At 01:30 every day (America/New_York) or table 'Orders' was updated" in cells
    assert "None" not in cells  # no empty cron column for a tree


def test_nested_tree_renders_nested_blocks(
    tocsin: Tocsin, client: TestClient, table_id: str
) -> None:
    tocsin.register_workflows([workflow(id="imports").then(send_report).commit()])
    tree = AllOf(Cron("0 9 * * 1-5"), AnyOf(TableUpdated(table_id), WorkflowSucceeded("imports")))
    define(tocsin, tree, tz="Europe/Paris")
    section = tree_section(client.get(f"/workflows/schedules/{SID}").text)
    outer = section.index("tgroup-all")
    inner = section.index("tgroup-any")
    assert outer < inner  # the ANY block sits inside the ALL block
    assert section.count('class="tchildren"') == 2
    words = text_of(section)
    assert "ALL of: Time At 09:00 on Monday through Friday (Europe/Paris)" in words
    assert "ANY of: Event table" in words
    assert "workflow imports succeeded waiting" in words
    assert 'href="/workflows/imports"' in section
    assert words.count("waiting") == 2
    assert "satisfied since" not in words


def test_a_plain_cron_schedule_keeps_its_rendering(tocsin: Tocsin, client: TestClient) -> None:
    sched = Schedule(cron="0 9 * * *", timezone="UTC")
    tocsin.register_workflows([workflow(id="watch", schedule=sched).then(send_report).commit()])
    tocsin.sync_schedules(now=T0)
    page = client.get(f"/workflows/schedules/{SID}").text
    assert '<section class="trigger"' not in page
    assert "<dt>Cron</dt><dd><code>0 9 * * *</code> — At 09:00 every day</dd>" in page
    listing = client.get("/workflows/schedules").text
    assert '<code class="cron">0 9 * * *</code>' in listing


def test_tree_summary_strips_only_the_outer_parentheses() -> None:
    assert tree_summary("(a and (b or c))") == "a and (b or c)"
    assert tree_summary("(a) and (b)") == "(a) and (b)"
    assert tree_summary("At 09:00 every day") == "At 09:00 every day"


def test_a_stored_tree_that_no_longer_reads_shows_why_never_500(
    tocsin: Tocsin, client: TestClient
) -> None:
    from tocsin.store import schedules as store_schedules

    tocsin.register_workflows([workflow(id="watch").then(send_report).commit()])
    broken = {"all": [{"cron": "0 9 * * *", "timezone": "Gone/Zone"}]}
    with tocsin.store.begin() as tx:
        store_schedules.insert_schedule(
            tx,
            values={
                "id": SID, "workflow_id": "watch", "source": "imperative", "cron": "",
                "timezone": "UTC", "overlap": "allow", "input_data": None, "initial_state": None,
                "request_context": None, "metadata": None, "paused_at": None, "next_fire_at": T0,
                "last_fire_id": None, "trigger_tree": broken, "latches": None,
                "evaluated_at": T0, "created_at": T0, "updated_at": T0,
            },
        )  # fmt: skip
    page = client.get(f"/workflows/schedules/{SID}")
    assert page.status_code == 200
    section = tree_section(page.text)
    assert 'class="error"' in section and "Gone/Zone" in section
    assert "ALL of:" not in section
    listing = client.get("/workflows/schedules")
    assert listing.status_code == 200 and "unreadable trigger" in listing.text


def test_an_event_only_tree_held_by_a_busy_run_is_satisfied_now(
    tocsin: Tocsin, client: TestClient, clock: Clock, table_id: str
) -> None:
    sched = Schedule(trigger=TableUpdated(table_id), timezone="UTC")  # overlap="skip"
    tocsin.register_workflows([workflow(id="watch", schedule=sched).then(send_report).commit()])
    tocsin.sync_schedules(now=T0)
    words = text_of(tree_section(client.get(f"/workflows/schedules/{SID}").text))
    assert "when its events occur (no time trigger)" in words
    assert "Event table Orders updated waiting" in words  # a single leaf, no group
    assert "ALL of:" not in words and "ANY of:" not in words
    tocsin.insert_record(table_id, {"N": 1}, now=EVENT_AT)
    assert tocsin.tick(now=EVENT_AT)["schedules_fired"] == 1  # its run stays pending
    later = EVENT_AT.replace(minute=20)
    tocsin.insert_record(table_id, {"N": 2}, now=later)
    assert tocsin.tick(now=later)["schedules_fired"] == 0  # latched, held back by the run
    clock.now = later
    section = tree_section(client.get(f"/workflows/schedules/{SID}").text)
    satisfied = re.search(r'id="satisfied-now">(.*?)</dd>', section)
    assert satisfied is not None and "badge-satisfied" in satisfied.group(1)
    assert "satisfied since 2026-03-02 07:20:00 UTC" in text_of(section)


def test_a_paused_tree_could_fire_at_no_instant(
    tocsin: Tocsin, client: TestClient, table_id: str
) -> None:
    define(tocsin, AllOf(Cron("0 9 * * *"), TableUpdated(table_id)))
    tocsin.schedules.pause(SID, now=T0)
    section = tree_section(client.get(f"/workflows/schedules/{SID}").text)
    could = re.search(r'id="could-fire">(.*?)</dd>', section)
    assert could is not None and "none while paused" in could.group(1)
