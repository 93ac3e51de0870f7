"""Studio sign-ins cannot sign another user out, and are rate limited per client address.

Against a real ``tocsin serve`` with its default limits: one token's sessions are capped at 20
(its oldest go first, never another token's), and one client address gets 10 sign-ins a minute,
then 429 ``{"detail": …}`` with ``Retry-After``. Loopback answers from 127.0.0.0/8, so the test
signs in from several client addresses (``local_address``) without changing a limit.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.processes import create_token, e2e_env, serving
from tocsin import messages

pytestmark = pytest.mark.slow


@pytest.fixture
def env(store_url: str, at_head: None) -> dict[str, str]:
    return {**e2e_env(store_url), "TOCSIN_TICK_EVERY_S": "3600"}


@pytest.fixture
def base(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    with serving(env, tmp_path) as (_, url):
        yield url


def client(base: str, address: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, transport=transport, follow_redirects=False)


def sign_in(http: httpx.Client, token: str) -> httpx.Response:
    return http.get("/login", params={"token": token, "next": "/tables"})


def signed_in(base: str, session: str) -> bool:
    """A page answers 200 to this session cookie (a signed-out one is sent to /login)."""
    with client(base, "127.0.0.1") as http:
        http.cookies.set("tocsin_session", session)
        return http.get("/tables").status_code == 200


def test_a_token_holder_cannot_sign_others_out_and_sign_ins_are_rate_limited(
    base: str,
    env: dict[str, str],
) -> None:
    victim = create_token(env, str(uuid.uuid4()))
    attacker = create_token(env, str(uuid.uuid4()))
    with client(base, "127.0.0.1") as http:
        answer = sign_in(http, victim)
    assert answer.status_code == 303
    victim_session = answer.cookies["tocsin_session"]

    # 21 sign-ins with one token, 7 from each of three addresses (under the address limit)
    attacker_sessions = []
    for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        with client(base, address) as http:
            for _ in range(7):
                answer = sign_in(http, attacker)
                assert answer.status_code == 303
                attacker_sessions.append(answer.cookies["tocsin_session"])
    assert signed_in(base, victim_session)  # no other token's session is dropped
    assert not signed_in(base, attacker_sessions[0])  # that token's oldest went first
    assert all(signed_in(base, s) for s in attacker_sessions[1:])  # 20 kept

    # one address: 10 sign-ins a minute, right token or wrong, then 429 with Retry-After
    with client(base, "127.0.0.5") as http:
        for n in range(10):
            answer = sign_in(http, attacker if n % 2 else "not-a-token")
            assert answer.status_code in (200, 303)
        refused = sign_in(http, attacker)
    assert refused.status_code == 429
    retry_after = int(refused.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert refused.json() == {"detail": messages.studio_sign_in_limited(10, retry_after)}
    with client(base, "127.0.0.6") as http:  # another address is not limited by it
        assert sign_in(http, victim).status_code == 303
    assert signed_in(base, victim_session)
