"""Studio's lane pages without a browser (both backends; SPEC §14, §16): the lane
list, one lane's runs with their three layers and decision badges, the ``?decision=`` filter,
pagination, rights (``schedules:read``) and bad input as 4xx."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tocsin import Lane
from tocsin.api.app import create_app
from tocsin.service import Tocsin

from .conftest import CHAT
from .studio_app import FEED, LANE_ID, LANES, _run, drive_lane, fetch, handle, policy
from .test_studio_pages import csrf_of, member, writer

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

LANE = f"/lanes/{LANE_ID}"


@pytest.fixture
def t(tocsin: Tocsin) -> Tocsin:
    tocsin.lanes.register(LANES)
    return tocsin


@pytest.fixture
def client(t: Tocsin) -> Iterator[TestClient]:
    with TestClient(create_app(tocsin=t), follow_redirects=False) as http:
        yield http


def rows(html: str) -> list[str]:
    """The decision (or state) of each attempt row, top to bottom."""
    return re.findall(r'data-attempt-id="attempt_[0-9a-f]{32}" data-decision="([a-z]+)"', html)


def test_lane_pages_need_a_session_and_schedules_read(client: TestClient, t: Tocsin) -> None:
    for path in ("/lanes", LANE):
        resp = client.get(path)
        assert resp.status_code == 303 and resp.headers["location"].startswith("/login?next=")
    table_only = t.create_token(scope="chatroom", scope_id=CHAT, role="moderator")
    client.get("/login", params={"token": table_only})
    for path in ("/lanes", LANE):
        refused = client.get(path)
        assert refused.status_code == 403 and "schedules:read" in refused.text, path
    client.get("/login", params={"token": member(t)})
    assert client.get("/lanes").status_code == 200
    assert client.get(LANE).status_code == 200


def test_empty_states_say_what_to_do_next(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": member(t)})
    listing = client.get("/lanes").text
    assert 'href="/lanes"' in listing and 'aria-current="page">Lanes' in listing  # navigation
    assert f'data-lane-id="{LANE_ID}"' in listing and "never ran" in listing
    assert '<code class="cron">0 0 1 1 *</code>' in listing
    assert "At 00:00 on day 1 of the month in January" in listing  # the cron in words
    assert "Asia/Taipei" in listing and "policy-v1" in listing
    detail = client.get(LANE).text
    assert "No runs yet." in detail and f"POST /api/lanes/{LANE_ID}/trigger" in detail
    filtered = client.get(LANE, params={"decision": "ready"}).text
    assert "No run of this lane was decided <strong>ready</strong>" in filtered


def test_runs_show_three_layers_and_decision_badges(client: TestClient, t: Tocsin) -> None:
    drive_lane(t)
    (lane,) = t.lanes.list()  # one grouped read gives the counts per decision
    assert lane["attempts"] == 7 and lane["decisions"] == {
        "ready": 2,
        "noop": 2,
        "rejected": 1,
        "ignored": 1,
        "stopped": 1,
    }
    client.get("/login", params={"token": writer(t)})
    listing = client.get("/lanes").text
    assert "badge-decision-ready" in listing  # the last decision
    assert '<td data-label="Attempts"><div class="cell">7<' in listing
    counts = dict(re.findall(r'data-count="([a-z]+)">[a-z]+ (\d+)</a>', listing))
    assert counts == {"ready": "2", "noop": "2", "rejected": "1", "ignored": "1", "stopped": "1"}
    assert f'<a href="/lanes/{LANE_ID}?decision=noop" data-count="noop">' in listing
    page = client.get(LANE).text
    assert rows(page) == ["ready", "noop", "rejected", "ignored", "ready", "noop", "stopped"]
    for status in ("ready", "noop", "rejected", "ignored", "stopped"):
        assert f"badge-decision badge-decision-{status}" in page
    for reason in ("selected", "source_empty", "window_overlap", "duplicate_trigger"):
        assert f'<code class="small">{reason}</code>' in page
    assert "no_eligible_input" in page and "source_unavailable" in page
    # source layer: status, failure category, candidate count
    assert "badge-not-asked" in page and "badge-failed" in page and "timeout" in page
    assert "3 candidates" in page and "1 candidate<" in page
    # selection layer: accepted refs, rejected refs with their reasons
    assert "accepted: <code>post-zh</code>" in page
    assert '<code>post-en</code> <span class="muted">policy excluded</span>' in page
    assert '<code>post-old</code> <span class="muted">outside window</span>' in page
    # trigger layer: kind, both instants (UTC on hover), the window [start, end)
    assert "badge-scheduled" in page and "badge-manual" in page
    assert "title='2026-09-09 23:30:00 UTC'" in page  # day 2's end, 07:30 in Taipei
    assert "title='2026-09-09 23:30:05 UTC'" in page  # observed five seconds later
    assert "(excluded)" in page
    # the handler's outcome beside the contract
    assert "badge-succeeded" in page and "RuntimeError: downstream refused" in page
    assert page.count("not called") == 5


def test_the_decision_filter_narrows_runs(client: TestClient, t: Tocsin) -> None:
    drive_lane(t)
    client.get("/login", params={"token": member(t)})
    page = client.get(LANE).text
    for status in ("ready", "noop", "rejected", "ignored", "stopped"):
        assert f'href="/lanes/{LANE_ID}?decision={status}"' in page
    assert '>noop <span class="muted">2</span></a>' in page  # the count on each filter
    expected = {"ready": 2, "noop": 2, "rejected": 1, "ignored": 1, "stopped": 1}
    for status, count in expected.items():
        got = client.get(LANE, params={"decision": status}).text
        assert rows(got) == [status] * count, status
        assert f'data-decision="{status}" aria-current="page"' in got


def test_runs_are_paginated_newest_first(client: TestClient, t: Tocsin) -> None:
    for day in range(30):
        _run(t, day)
    client.get("/login", params={"token": member(t)})
    first = client.get(LANE).text
    assert len(rows(first)) == 25 and "page 1 of 2 · 30 runs" in first
    assert "title='2026-10-06 23:30:05 UTC'" in first  # the newest (day 29) on page 1
    assert f'href="/lanes/{LANE_ID}?page=2"' in first
    second = client.get(LANE, params={"page": 2}).text
    assert len(rows(second)) == 5 and "title='2026-09-07 23:30:05 UTC'" in second  # day 0
    beyond = client.get(LANE, params={"page": 9}).text
    assert rows(beyond) == [] and "No runs on page 9 (there are 30)" in beyond
    assert f'href="/lanes/{LANE_ID}?page=1"' in beyond
    noop = client.get(LANE, params={"decision": "noop", "page": 2}).text
    assert len(rows(noop)) == 5 and f'href="/lanes/{LANE_ID}?decision=noop&amp;page=1"' in noop


def test_bad_input_is_4xx_never_500(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": member(t)})
    assert client.get("/lanes/nope").status_code == 404
    assert client.get(LANE, params={"decision": "bogus"}).status_code == 422
    assert client.get(LANE, params={"page": 0}).status_code == 422
    assert client.get(LANE, params={"page": "x"}).status_code == 422
    assert client.get("/lanes/" + "x" * 65).status_code in (404, 422)
    assert client.get("/lanes/a%20b").status_code in (404, 422)


def test_a_stored_lane_no_longer_registered_still_shows(tocsin: Tocsin) -> None:
    """The server lists lanes with a stored history even when its app does not register them
    (as ``GET /api/lanes``): another process recorded the runs."""
    other = Tocsin.open(tocsin.settings.database_url, lanes=LANES)
    try:
        drive_lane(other)
    finally:
        other.close()
    with TestClient(create_app(tocsin=tocsin), follow_redirects=False) as client:
        client.get("/login", params={"token": member(tocsin)})
        listing = client.get("/lanes").text
        assert f'data-lane-id="{LANE_ID}"' in listing and "not registered" in listing
        assert "Asia/Taipei" in listing and "policy-v1" in listing  # from the stored row
        assert len(rows(client.get(LANE).text)) == 7


def test_a_writer_triggers_a_manual_run_from_the_form(client: TestClient, t: Tocsin) -> None:
    FEED.update({"candidates": [], "down": None, "handler_fails": False})
    client.get("/login", params={"token": writer(t)})
    page = client.get(LANE).text
    assert f'action="/lanes/{LANE_ID}/trigger"' in page and "in Asia/Taipei" in page
    window = {"start": "2026-09-07T22:00", "end": "2026-09-08T07:30:00"}
    refused = client.post(f"{LANE}/trigger", data=window)  # no CSRF token
    assert refused.status_code == 403 and t.lanes.contracts(LANE_ID)["total"] == 0
    done = client.post(f"{LANE}/trigger", data={**window, "csrf": csrf_of(page)})
    assert done.status_code == 303 and done.headers["location"] == LANE
    (item,) = t.lanes.contracts(LANE_ID)["items"]
    assert item["kind"] == "manual"
    assert item["decision"] == {"status": "noop", "reason": "source_empty"}
    assert item["contract"]["window"] == {  # read in the lane's zone
        "start_inclusive": "2026-09-07T22:00:00+08:00",
        "end_exclusive": "2026-09-08T07:30:00+08:00",
    }
    assert rows(client.get(LANE).text) == ["noop"]


def test_the_trigger_form_refuses_bad_input_and_readers(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": writer(t)})
    csrf = csrf_of(client.get(LANE).text)
    for start, end in (
        ("yesterday", "2026-09-08T07:30"),
        ("2026-09-08T07:30", ""),
        ("2026-09-08T07:30", "2026-09-07T22:00"),  # end before start
        ("2026-09-08T07:30", "2026-09-08T07:30"),  # empty window
    ):
        resp = client.post(f"{LANE}/trigger", data={"start": start, "end": end, "csrf": csrf})
        assert resp.status_code == 400, (start, end)
        assert "window" in resp.text
    assert client.post("/lanes/nope/trigger", data={"csrf": csrf}).status_code == 404
    assert t.lanes.contracts(LANE_ID)["total"] == 0  # nothing written
    client.get("/login", params={"token": member(t)})
    page = client.get(LANE).text
    assert "/trigger" not in page.replace(f"POST /api/lanes/{LANE_ID}/trigger", "")
    window = {"start": "2026-09-07T22:00", "end": "2026-09-08T07:30", "csrf": csrf_of(page)}
    refused = client.post(f"{LANE}/trigger", data=window)
    assert refused.status_code == 403 and "may look but not change" in refused.text
    assert t.lanes.contracts(LANE_ID)["total"] == 0


def test_a_writer_pauses_and_resumes_and_the_history_shows_paused_skips(
    client: TestClient, t: Tocsin
) -> None:
    """The lane fires once a year (``0 0 1 1 *`` in Taipei): paused over two instants, the
    resume records ``paused ×2``; the next instant's run shows above the skip row."""
    FEED.update({"candidates": [], "down": None, "handler_fails": False})
    start = datetime(2026, 12, 1, tzinfo=UTC)
    t.tick(now=start)
    client.app.state.studio_clock = lambda: start  # type: ignore[attr-defined]
    client.get("/login", params={"token": writer(t)})
    page = client.get(LANE).text
    assert '<span id="state"><span class="badge badge-active">active</span>' in page
    assert f'action="/lanes/{LANE_ID}/pause"' in page and "No scheduled run yet." in page
    assert client.post(f"{LANE}/pause", data={}).status_code == 403  # no CSRF token
    done = client.post(f"{LANE}/pause", data={"csrf": csrf_of(page)})
    assert done.status_code == 303 and done.headers["location"] == LANE
    assert t.lanes.get(LANE_ID)["paused_at"] == start
    page = client.get(LANE).text
    assert "badge-paused" in page and f'action="/lanes/{LANE_ID}/resume"' in page
    assert "none while paused" in page
    for year in (2027, 2028):
        assert t.tick(now=datetime(year, 1, 1, tzinfo=UTC))["lanes_fired"] == 0
    later = datetime(2028, 1, 2, tzinfo=UTC)
    client.app.state.studio_clock = lambda: later  # type: ignore[attr-defined]
    client.get("/login", params={"token": writer(t)})  # a new session: the old one expired
    page = client.get(LANE).text
    assert client.post(f"{LANE}/resume", data={"csrf": csrf_of(page)}).status_code == 303
    page = client.get(LANE).text
    assert 'data-skip-reason="paused" data-skip-count="2"' in page
    assert "skipped 2 occurrences" in page and "— paused" in page
    assert t.tick(now=datetime(2029, 1, 1, tzinfo=UTC))["lanes_fired"] == 1
    t.work(now=datetime(2029, 1, 1, tzinfo=UTC))
    page = client.get(LANE).text
    fire = page.index("data-fire-id=")
    assert fire < page.index('data-skip-reason="paused"')  # newest first: the fire above
    assert 'data-status="noop"' in page and "title='2028-12-31 16:00:00 UTC'" in page
    # the shared fire panel, with a lane's columns: its window and attempt, no run timing
    panel = page[page.index('<section id="fires"') : page.index('<section id="attempts-panel"')]
    assert "<th>Window from</th>" in panel and "attempt 1" in panel
    assert "<th>Started</th>" not in panel and "data-poll-url" not in panel
    client.get("/login", params={"token": member(t)})
    assert "/pause" not in client.get(LANE).text  # a reader gets no button


def test_a_lane_without_a_schedule_has_no_pause_and_no_fire_history(tocsin: Tocsin) -> None:
    manual = Lane(id="by-hand", policy_version="v1", source=fetch, select=policy, handler=handle)
    tocsin.lanes.register([manual])
    with TestClient(create_app(tocsin=tocsin), follow_redirects=False) as client:
        client.get("/login", params={"token": writer(tocsin)})
        page = client.get("/lanes/by-hand").text
        assert "/pause" not in page and 'id="fires"' not in page
        refused = client.post("/lanes/by-hand/pause", data={"csrf": csrf_of(page)})
        assert refused.status_code == 409 and "has no schedule" in refused.text


def test_a_writer_retries_an_attempt_whose_data_did_not_get_through(
    client: TestClient, t: Tocsin
) -> None:
    """Retry on the stopped and the handler-failed attempts (a new attempt of the same run,
    ``kind: retry``); none on the others, none for a reader; CSRF, the verb and the attempt's
    lane are checked."""
    got = drive_lane(t)
    stopped, failed_handler = got[0], got[-1]
    client.get("/login", params={"token": writer(t)})
    page = client.get(LANE).text
    retry = f"/lanes/{LANE_ID}/attempts/{{}}/retry"
    buttons = re.findall(
        rf'action="/lanes/{LANE_ID}/attempts/(attempt_[0-9a-f]{{32}})/retry"', page
    )
    assert buttons == [failed_handler["attempt_id"], stopped["attempt_id"]]  # newest first
    assert "/requeue" not in page  # nothing pending or running
    url = retry.format(stopped["attempt_id"])
    assert client.post(url, data={}).status_code == 403  # no CSRF token
    assert (
        client.post(url.replace("/retry", "/redo"), data={"csrf": csrf_of(page)}).status_code == 422
    )
    other = client.post(
        f"/lanes/nope/attempts/{stopped['attempt_id']}/retry", data={"csrf": csrf_of(page)}
    )
    assert other.status_code == 404
    assert t.lanes.contracts(LANE_ID)["total"] == 7  # nothing written
    FEED.update({"candidates": [], "down": None, "handler_fails": False})
    done = client.post(url, data={"csrf": csrf_of(page)})
    assert done.status_code == 303 and done.headers["location"] == LANE
    newest = t.lanes.contracts(LANE_ID)["items"][0]
    assert newest["kind"] == "retry" and newest["run_id"] == stopped["run_id"]
    assert newest["attempt"] == 2 and newest["decision"]["status"] == "noop"
    client.get("/login", params={"token": member(t)})
    assert "/retry" not in client.get(LANE).text  # a reader gets no button


def test_a_writer_requeues_a_pending_attempt(client: TestClient, t: Tocsin) -> None:
    """A scheduled attempt the tick admitted waits for a worker: Requeue sends it back to
    pending (its delivery lost); a live running one is refused (409) by the service's rule."""
    FEED.update({"candidates": [], "down": None, "handler_fails": False})
    start = datetime(2026, 12, 1, tzinfo=UTC)
    t.tick(now=start)
    due = datetime(2027, 1, 1, tzinfo=UTC)
    assert t.tick(now=due)["lanes_fired"] == 1
    client.app.state.studio_clock = lambda: due  # type: ignore[attr-defined]
    client.get("/login", params={"token": writer(t)})
    page = client.get(LANE).text
    (attempt,) = t.lanes.contracts(LANE_ID)["items"]
    assert attempt["state"] == "pending"
    url = f"/lanes/{LANE_ID}/attempts/{attempt['attempt_id']}/requeue"
    assert f'action="{url}"' in page and "/retry" not in page
    done = client.post(url, data={"csrf": csrf_of(page)})
    assert done.status_code == 303 and done.headers["location"] == LANE
    assert t.lanes.attempt(attempt["attempt_id"])["state"] == "pending"
    t.work(now=due)
    page = client.get(LANE).text
    assert "/requeue" not in page and rows(page) == ["noop"]
