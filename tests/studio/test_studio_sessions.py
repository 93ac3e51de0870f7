"""The session store's bounds and the sign-in limiter, with explicit instants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tocsin.studio.sessions import SESSION_TTL, Sessions, SignInLimiter

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def test_a_token_keeps_its_newest_sessions_and_never_drops_another_tokens() -> None:
    store = Sessions(per_token=3)
    other = store.open("other", NOW)
    mine = [store.open("mine", NOW + timedelta(seconds=i)) for i in range(5)]
    assert store.get(other.id, NOW) == other
    assert [store.get(s.id, NOW) is not None for s in mine] == [False, False, True, True, True]
    store.close(mine[-1].id)
    assert store.get(mine[-1].id, NOW) is None
    assert store.open("mine", NOW) is not None
    assert store.get(mine[2].id, NOW) is not None  # closing one made room: nothing else dropped


def test_the_full_store_drops_expired_then_the_busiest_tokens_oldest() -> None:
    store = Sessions(per_token=10, max_sessions=4)
    lone = store.open("lone", NOW)
    busy = [store.open("busy", NOW) for _ in range(3)]
    store.open("busy", NOW)  # full: the busiest token's oldest goes, not the lone one
    assert store.get(lone.id, NOW) == lone
    assert store.get(busy[0].id, NOW) is None
    later = NOW + SESSION_TTL
    fresh = store.open("lone", later)  # full again: the expired go first
    assert store.get(fresh.id, later) == fresh


def test_sign_ins_per_address_slide_over_a_minute() -> None:
    limiter = SignInLimiter(per_minute=2)
    assert limiter.admit("a", NOW) == 0
    assert limiter.admit("a", NOW + timedelta(seconds=20)) == 0
    assert limiter.admit("a", NOW + timedelta(seconds=30)) == 30  # until the first leaves
    assert limiter.admit("b", NOW + timedelta(seconds=30)) == 0  # another address
    assert limiter.admit("a", NOW + timedelta(seconds=60)) == 0
    assert limiter.admit("a", NOW + timedelta(seconds=61)) == 19
