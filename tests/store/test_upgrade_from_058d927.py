"""A database populated by commit 058d927 upgrades with nothing lost (SQLite and PostgreSQL).

The fixtures (``fixtures/upgrade_058d927.*``, written by ``scripts/make_upgrade_fixture.py``
running 058d927's code with the app of ``upgrade_app.py``) hold every schedule kind in use:
table triggers of every kind (one paused, one paused then resumed, one on a trashed table), row
events, table runs pending, running (a dead worker's), done, failed, retried by hand and waiting
for an automatic retry, staged changes, declared workflow schedules (cron with catch-up, paused,
a trigger tree with a latched event leaf), imperative tree schedules applied as IaC documents
(one latched, one with its event still in the outbox), workflow runs in every status (one a dead
worker's), backfill and manual runs, fires and skips of every reason, a lane with attempts of
every decision and one pending, tokens (live, revoked, expired) and a signing secret.

The test migrates the fixture to head with today's code, then reads it through the facade only
(``upgrade_observe.observe``: no table name, so it stays valid whatever the migrations do to the
run tables) and compares with what 058d927's facade answered: every value 058d927 showed must
still be there, unchanged (today's answers may add keys). Then it carries on
(``upgrade_app.carry_on``: work the pending runs once, tick on, resume what was paused, repeat a
backfill) and compares with what 058d927 did on a copy of the same database.

One read goes below the facade: the occurrence ledger (``store.ledger.fired_identities``), since
a workflow or lane instant's claim shows in no answer, only in a second scheduler's refusal.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tocsin import Tocsin
from tocsin.settings import Settings
from tocsin.store import open_store
from tocsin.store.ledger import fired_identities
from tocsin.store.migrate import current_revision, head_revision

from . import upgrade_app as app
from .upgrade_observe import jsonable, observe

FIXTURES = Path(__file__).with_name("fixtures")
DUMP_SCHEMA = "upgrade058"  # the schema the dump was taken from


@cache
def expected(backend: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((FIXTURES / "upgrade_058d927.json").read_text())[backend]
    return found


def _restore_dump(store_url: str) -> None:
    """Load the PostgreSQL dump into the test's own empty schema (``store_url`` names it)."""
    match = re.search(r"search_path%3D(\w+)", store_url)
    assert match, store_url
    schema = match[1]
    dsn = store_url.replace("postgresql+psycopg://", "postgresql://")
    lines = []
    for line in (FIXTURES / "upgrade_058d927.pg.sql").read_text().splitlines():
        if line.startswith("\\") or line.startswith(f"CREATE SCHEMA {DUMP_SCHEMA};"):
            continue  # psql meta-commands; the schema exists already
        lines.append(line)
    script = "\n".join(lines).replace(f"{DUMP_SCHEMA}.", f"{schema}.")
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        conn.execute(script.encode())


@pytest.fixture
def upgraded(backend: str, store_url: str, tmp_path: Path) -> Iterator[Tocsin]:
    """The fixture database of ``backend``, migrated to head, opened with the app."""
    if backend == "sqlite":
        shutil.copyfile(FIXTURES / "upgrade_058d927.sqlite", tmp_path / "tocsin.db")
        assert store_url == f"sqlite:///{tmp_path / 'tocsin.db'}"
    else:
        _restore_dump(store_url)
    store = open_store(store_url)  # the migrate entry point every process opens through
    try:
        assert current_revision(store) == head_revision()
    finally:
        store.dispose()
    settings = Settings(
        database_url=store_url,
        admin_token="upgrade-fixture-admin-token",
        stuck_after_s=app.STUCK_AFTER_S,
    )
    t = Tocsin.open(store_url, settings=settings, workflows=app.WORKFLOWS, lanes=app.LANES)
    try:
        yield t
    finally:
        t.close()


# What today's facade says differently from 058d927 on purpose, nothing lost:
# - a paused trigger's preview arm names the pause's start ``paused_since`` (was ``paused_at``);
RENAMED = {".preview.triggers[]": {"paused_at": "paused_since"}}
# - the global dry run reports scheduled lanes too (``{"kind": "lane", …}`` entries, and their
#   runs in its ``runs``), where 058d927 reported none;
DUE_LISTS = re.compile(r"\.due\.(fires|not_firing)$")
ARM = re.compile(r"^.*?(\.preview\.triggers)\[\d+\]$")
# - a tree's words name an event leaf's table by its name (was its id);
DESCRIPTION = re.compile(r"\.description$")
# - a lane run made after the upgrade gets its ``run_id`` / ``attempt_id`` by the seed's formula
#   (runs recorded before keep theirs, still verify and are still found as duplicates), so it is
#   a new id like the run, fire and message ids a carry-on makes: those are compared as a
#   one-to-one renaming (the same new id everywhere it appears).
# - work done after the upgrade is timed honestly: the pass's ``now`` plus the time the step or
#   action really took, where 058d927 stamped ``now`` itself.
TIMING = re.compile(r"\.(started_at|ended_at|finished_at|updated_at|duration_ms)$")
LATE = timedelta(seconds=60)
NEW_ID = re.compile(
    r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{36}"
    r"|run_[0-9a-f]{32}|attempt_[0-9a-f]{32})$"
)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def _a_little_later(want: Any, got: Any) -> bool:
    if isinstance(want, int) and isinstance(got, int):
        return want <= got <= want + LATE.total_seconds() * 1000
    if isinstance(want, str) and isinstance(got, str):
        try:
            then, now = (_utc(datetime.fromisoformat(v)) for v in (want, got))
        except ValueError:
            return False
        return then <= now <= then + LATE
    return False


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class Comparison:
    """Where today's answer lost or changed what 058d927's holds (keys it adds are fine)."""

    def __init__(self, names: dict[str, str], old: set[str] | None = None) -> None:
        self.names = names  # table id -> name
        self.old = old  # the ids 058d927 made; None: every id must be equal
        self.fresh: dict[str, str] = {}  # a new id then -> the new id now
        self.found: list[str] = []

    def same(self, path: str, want: Any, got: Any) -> bool:
        if want == got:
            return self.old is None or want not in self.fresh or self.fresh[want] == got
        if self.old is not None and TIMING.search(path):
            return _a_little_later(want, got)
        if not isinstance(want, str) or not isinstance(got, str):
            return False
        if DESCRIPTION.search(path):
            for table_id, name in self.names.items():
                want = want.replace(f"table '{table_id}'", f"table '{name}'")
            return want == got
        if self.old is None or not NEW_ID.match(want) or want in self.old:
            return False
        if want in self.fresh:
            return self.fresh[want] == got
        if not NEW_ID.match(got) or got in self.old or got in self.fresh.values():
            return False
        self.fresh[want] = got
        return True

    def walk(self, want: Any, got: Any, path: str = "") -> None:
        if isinstance(want, dict):
            if not isinstance(got, dict):
                self.found.append(f"{path}: {want!r} became {got!r}")
                return
            if path.endswith(".due") and isinstance(got.get("runs"), int):
                lanes = [e for e in got.get("fires", []) if e.get("kind") == "lane"]
                got = {**got, "runs": got["runs"] - sum(int(e["runs"]) for e in lanes)}
            renamed = RENAMED.get(ARM.sub(r"\1[]", path), {})
            for key, value in want.items():
                now_key = renamed.get(key, key)
                if now_key not in got:
                    self.found.append(f"{path}.{key}: missing (was {value!r})")
                else:
                    self.walk(value, got[now_key], f"{path}.{key}")
        elif isinstance(want, list):
            if DUE_LISTS.search(path) and isinstance(got, list):
                got = [i for i in got if not (isinstance(i, dict) and i.get("kind") == "lane")]
            if not isinstance(got, list) or len(got) != len(want):
                size = len(got) if isinstance(got, list) else got
                self.found.append(f"{path}: {len(want)} items became {size!r}")
                return
            for index, (one, other) in enumerate(zip(want, self.paired(want, got), strict=True)):
                self.walk(one, other, f"{path}[{index}]")
        elif not self.same(path, want, got):
            self.found.append(f"{path}: {want!r} became {got!r}")

    def paired(self, want: list[Any], got: list[Any]) -> list[Any]:
        """``got`` in ``want``'s order: items with an id 058d927 made by that id (the order of
        items listed at the same instant is nobody's promise), the others as they come."""
        keyed = [item.get("id") if isinstance(item, dict) else None for item in got]
        if None in keyed or len(set(keyed)) != len(keyed):
            return got
        by_id = dict(zip(keyed, got, strict=True))
        known = {w["id"] for w in want if isinstance(w, dict) and w.get("id") in by_id}
        if self.old is not None:
            known &= self.old
        rest = iter(item for key, item in zip(keyed, got, strict=True) if key not in known)
        return [
            by_id[w["id"]] if isinstance(w, dict) and w.get("id") in known else next(rest)
            for w in want
        ]

    def check(self, want: Any, got: Any, what: str) -> None:
        self.found = []
        self.walk(want, got)
        found = self.found
        assert not found, f"{what}: {len(found)} differences\n" + "\n".join(found[:40])


@pytest.mark.parametrize("backend_of_fixture", ["sqlite", "postgresql"])
def test_the_fixture_covers_every_kind_of_state(backend_of_fixture: str) -> None:
    """The fixture is what this test claims it is (a regenerated one cannot thin out)."""
    state = expected(backend_of_fixture)["state"]
    triggers = state["tables"]["Cases"]["triggers"]
    kinds = {
        t["config"].get("schedule", {}).get("type", t["config"]["on"]) for t in triggers.values()
    }
    clock = {"date_column_reached", "interval", "daily", "cron"}
    assert kinds == clock | {"created", "updated", "deleted", "restored"}
    run_statuses = {r["status"] for t in triggers.values() for r in t["runs"]["items"]}
    assert run_statuses == {"pending", "running", "done", "failed"}
    reasons = {s["reason"] for t in triggers.values() for s in t.get("skips", {}).get("items", [])}
    assert {"coalesced", "paused", "active_run"} <= reasons
    assert state["tables"]["Cases"]["triggers"]["trg_paused"]["next_fires"]["items"] == []
    schedules = state["schedules"]
    assert schedules["wf_upg-paused"]["get"]["paused"] is True
    latches = [
        leaf.get("latched_since")
        for s in schedules.values()
        for leaf in (s["get"].get("trigger") or {}).get("tree", {}).get("all", [])
        if "event" in leaf
    ]
    assert len(latches) == 2 and all(latches)
    statuses = {r["get"]["status"] for r in state["workflow_runs"]}
    assert statuses == {"pending", "running", "success", "failed", "suspended", "canceled"}
    decisions = {
        (item["contract"] or {}).get("decision", {}).get("status")
        for item in state["lanes"][app.LANE_ID]["contracts"]["items"]
    }
    assert decisions == {None, "ready", "noop", "stopped", "rejected", "ignored"}
    changes = state["tables"]["Approvals"]["staged_changes"]["items"]
    assert sorted(c["status"] for c in changes) == ["applied", "rejected", "staged"]
    assert state["tables"]["Old"]["table"]["trashed"] is True
    assert any(token["revoked_at"] for token in state["tokens"])
    namespaces = {row[0] for row in expected(backend_of_fixture)["made"]["ledger"]}
    assert {"workflow", "backfill", "lane"} < namespaces


def test_a_populated_database_keeps_every_schedule_run_and_history(
    backend: str, upgraded: Tocsin
) -> None:
    want = expected(backend)
    t = upgraded
    made = want["made"]
    assert t.verify_token(made["token"], now=app.FINAL) is not None
    assert t.verify_token(made["reader_token"], now=app.FINAL) is not None
    assert t.verify_token(made["revoked_token"], now=app.FINAL) is None
    assert t.verify_token(made["expired_token"], now=app.FINAL) is None
    assert t.verify_token(made["expired_token"], now=app.at(0, 30)) is not None
    assert t.signing_secret(*app.CHAT_SCOPE) == made["signing_secret"]

    names = {made["table_id"]: "Cases"}
    state = observe(t, app.CHAT_SCOPE, made["tables"], app.FINAL)
    Comparison(names).check(want["state"], state, "the state 058d927 left")

    # the occurrence fence: every identity 058d927 claimed is still claimed (a workflow or lane
    # instant's claim is seen by no answer of the facade, only by a second scheduler's refusal)
    held = set()
    with t.store.read() as tx:
        for (namespace, key), group in groupby(made["ledger"], key=lambda row: row[:2]):
            wanted = [row[2] for row in group]
            found = fired_identities(tx, table_id=namespace, trigger_id=key, identities=wanted)
            held |= {(namespace, key, identity) for identity in found}
    lost = [row for row in made["ledger"] if tuple(row) not in held]
    assert not lost, f"ledger identities 058d927 claimed are gone: {lost}"

    # the declared schedules are the ones 058d927 stored: a sync changes nothing
    synced = t.sync_schedules(now=app.FINAL)
    assert sorted(synced["unchanged"]) == ["wf_upg-hourly", "wf_upg-paused", "wf_upg-tree"]
    assert not any(synced[k] for k in synced if k != "unchanged")

    answers = jsonable(app.carry_on(t, made["tables"]))
    after = observe(t, app.CHAT_SCOPE, made["tables"], app.END)
    carried = Comparison(names, old=set(strings(want["state"])) | set(strings(made)))
    carried.check(want["carry_on"], answers, "what carrying on answered")
    carried.check(want["after"], after, "the state after carrying on")

    # the same, said plainly (the comparison above already holds each)
    kept_promises(state, after, answers)


def _table_runs(seen: dict[str, Any]) -> dict[str, dict[str, Any]]:
    triggers = seen["tables"]["Cases"]["triggers"].values()
    return {run["id"]: run for trigger in triggers for run in trigger["runs"]["items"]}


def _fired(seen: dict[str, Any], schedule_id: str) -> list[str]:
    return [fire["scheduled_for"] for fire in seen["schedules"][schedule_id]["fires"]["items"]]


def kept_promises(state: dict[str, Any], after: dict[str, Any], answers: dict[str, Any]) -> None:
    """What the upgrade must keep, read from today's answers before and after carrying on."""
    # every pending table run is still claimable and ran exactly once more; the one a dead
    # worker left running was found stale and ran once more too
    before, later = _table_runs(state), _table_runs(after)
    pending = [run for run in before.values() if run["status"] in ("pending", "running")]
    assert len(pending) == 7  # daily, interval, cron, a date, a created, a retry, a dead one
    for run in pending:
        assert later[run["id"]]["status"] in ("done", "failed"), run
        assert later[run["id"]]["attempts"] == run["attempts"] + 1, run
    # a record value fires its date trigger once (its ledger identity holds)
    dates = [r["record_id"] for r in later.values() if r["trigger_id"] == "trg_date"]
    assert len(dates) == 2 and len(set(dates)) == 2
    # pending workflow runs ran once; the suspended one resumed
    runs = {r["get"]["id"]: r["get"] for r in after["workflow_runs"]}
    for run in state["workflow_runs"]:
        if run["get"]["status"] in ("pending", "running", "suspended"):
            assert runs[run["get"]["id"]]["status"] == "success", run
    assert answers["resumed"] == ["success"]
    # paused stayed paused until resumed at 12:10; then it fired from the next instant
    paused = after["tables"]["Cases"]["triggers"]["trg_paused"]["runs"]["items"]
    assert [r["scheduled_for"] for r in paused][-1] == "2026-09-01T00:00:00+00:00"
    assert all(r["scheduled_for"] > "2026-09-01T12:10" for r in paused[:-1])
    assert all(at > "2026-09-01T12:10" for at in _fired(after, "wf_upg-paused"))
    assert state["schedules"]["wf_upg-paused"]["get"]["paused"] is True
    # the latched leaves held: each tree fired at its next instant, the waiting event counted
    assert "2026-09-01T10:00:00+00:00" in _fired(after, "wf_upg-tree")
    assert "2026-09-01T10:00:00+00:00" not in _fired(state, "wf_upg-tree")
    assert _fired(after, app.IMPERATIVE_SCHEDULE) == ["2026-09-01T12:00:00+00:00"]
    assert len(_fired(after, app.EITHER_SCHEDULE)) == len(_fired(state, app.EITHER_SCHEDULE)) + 1
    # ledger identities: a repeated backfill creates nothing; a recorded lane run is a duplicate
    assert answers["backfill_again"] == {"created": 0, "existing": 2, "instants": 2}
    assert answers["lane_again"]["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert answers["verified"] and all(v["ok"] for v in answers["verified"])
    # the trashed table owed its windows: restored, it records them and fires on
    (owed,) = after["tables"]["Old"]["triggers"]["trg_old"]["skips"]["items"]
    assert (owed["reason"], owed["first_instant"][:16]) == ("table_trashed", "2026-09-01T02:00")
    # the staged change waiting for approval is still there and applies
    assert answers["approved"] == ["approved"]
