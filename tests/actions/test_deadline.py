"""An outbound action has ONE total deadline (connect + headers + body), enforced
on the socket even while a receiver drips its answer, against real servers on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from runs.slow_receivers import DripReceiver, FastReceiver
from tocsin import messages
from tocsin.actions.base import ActionEnv, ActionError, ActionTimeout
from tocsin.actions.net import deadline_s, send

SLACK_S = 0.75  # scheduling on a loaded machine; far below a drip that never ends


def env(**overrides: Any) -> ActionEnv:
    fields: dict[str, Any] = {
        "store": None,
        "records": None,
        "commands": {},
        "outbound_allow": ("127.0.0.1",),
    }
    return ActionEnv(**(fields | overrides))


def timed_send(action_env: ActionEnv, url: str, **kwargs: Any) -> tuple[float, Any]:
    start = time.monotonic()
    try:
        outcome: Any = send(action_env, method="POST", url=url, headers={}, **kwargs)
    except ActionError as exc:
        outcome = exc
    return time.monotonic() - start, outcome


def test_headers_dripping_forever_end_at_the_deadline() -> None:
    with DripReceiver(every_s=0.3) as drip:
        took, outcome = timed_send(env(), drip.url, json_body={"a": 1}, timeout_s=1.5)
        assert drip.arrived.wait(5)
    assert isinstance(outcome, ActionTimeout)
    assert outcome.detail == messages.action_deadline_passed("POST", drip.url, 1.5, "ReadTimeout")
    assert 1.5 <= took < 1.5 + SLACK_S
    (exchange,) = drip.exchanges
    assert exchange.sent >= 3  # bytes kept coming: every single read was well within its time


def test_a_silent_receiver_ends_at_the_deadline() -> None:
    with socket.socket() as listener:  # accepts (the kernel does), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        took, outcome = timed_send(env(), url, timeout_s=1)
    assert isinstance(outcome, ActionTimeout) and "1 s deadline" in outcome.detail
    assert 1 <= took < 1 + SLACK_S


def test_a_request_body_the_receiver_never_reads_ends_at_the_deadline() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        took, outcome = timed_send(env(), url, content="x" * (64 << 20), timeout_s=1)
    assert isinstance(outcome, ActionTimeout)
    assert outcome.detail.endswith("(timeout_s, connect + headers + body)")
    assert took < 1 + SLACK_S


def test_a_dripping_body_keeps_the_status_and_what_came_by_the_deadline() -> None:
    """The headers came: the request was delivered and answered, so the action succeeds with
    the start of the body that arrived before the deadline."""
    with DripReceiver(every_s=0.2, body=True) as drip:
        took, outcome = timed_send(env(), drip.url, timeout_s=1)
    assert not isinstance(outcome, Exception)
    assert outcome.status_code == 200 and set(outcome.text) == {"x"}
    assert 1 <= took < 1 + SLACK_S


def test_the_setting_caps_a_longer_timeout_s() -> None:
    with DripReceiver(every_s=0.3) as drip:
        capped = env(http_timeout_max_s=1.0)
        took, outcome = timed_send(capped, drip.url, timeout_s=30)
    assert isinstance(outcome, ActionTimeout) and "1 s deadline" in outcome.detail
    assert took < 1 + SLACK_S


def test_the_default_deadline_applies_without_timeout_s() -> None:
    with DripReceiver(every_s=0.3) as drip:
        took, outcome = timed_send(env(http_timeout_s=1.0), drip.url)
    assert isinstance(outcome, ActionTimeout) and "1 s deadline" in outcome.detail
    assert took < 1 + SLACK_S


def test_a_fast_receiver_answers_through_the_deadline_transport() -> None:
    with FastReceiver() as fast:
        _took, outcome = timed_send(env(), fast.url, json_body={}, timeout_s=5)
    assert outcome.status_code == 200 and outcome.text == "ok"
    assert len(fast.arrivals) == 1


@pytest.mark.parametrize("value", [0, -1, True, "5", float("nan"), float("inf")])
def test_a_malformed_timeout_fails_the_action(value: object) -> None:
    with pytest.raises(ActionError) as err:
        deadline_s(env(), value)
    assert err.value.detail == messages.ACTION_TIMEOUT_INVALID


def test_deadline_seconds() -> None:
    assert deadline_s(env(http_timeout_s=10.0, http_timeout_max_s=60.0)) == 10.0
    assert deadline_s(env(http_timeout_max_s=60.0), 2) == 2.0
    assert deadline_s(env(http_timeout_max_s=5.0), 30.5) == 5.0


def test_a_name_lookup_that_never_answers_ends_at_the_deadline() -> None:
    """``getaddrinfo`` has no timeout: a resolver that hangs must not hold the run past its
    deadline (the lookup counts against it, like connect, headers and body)."""
    released = threading.Event()

    def hanging(host: str) -> list[str]:
        released.wait(30)  # a blackholed resolver
        return ["93.184.216.34"]

    url = "http://hooks.example.test/x"
    try:
        took, outcome = timed_send(env(resolve=hanging), url, timeout_s=1)
    finally:
        released.set()
    assert isinstance(outcome, ActionTimeout)
    assert outcome.detail == messages.action_deadline_passed(
        "POST", url, 1, "NameResolutionTimeout"
    )
    assert 1 <= took < 1 + SLACK_S


def test_a_lookup_error_within_the_deadline_is_the_resolvers_own() -> None:
    def failing(host: str) -> list[str]:
        raise ActionError(f"cannot resolve host '{host}': no such name")

    took, outcome = timed_send(env(resolve=failing), "http://nowhere.test/x", timeout_s=5)
    assert not isinstance(outcome, ActionTimeout) and isinstance(outcome, ActionError)
    assert outcome.detail == "cannot resolve host 'nowhere.test': no such name"
    assert took < 1
