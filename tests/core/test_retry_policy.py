"""The automatic-retry policy: validation, backoff, cap, deterministic jitter. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tocsin.core.schedules.retry import RetryPolicy, jitter_fraction, retry_policy, validate_retry
from tocsin.errors import ConfigError

NOW = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)


def test_backoff_grows_by_factor_and_stops_at_the_cap() -> None:
    policy = RetryPolicy(max_attempts=6, backoff_s=30, factor=2, max_backoff_s=100, jitter=False)
    assert [policy.delay_s(n, "r") for n in range(1, 6)] == [30, 60, 100, 100, 100]


def test_the_attempts_are_counted_first_one_included() -> None:
    policy = RetryPolicy(max_attempts=3, jitter=False)
    assert policy.next_attempt_at(1, "r", NOW) == NOW + timedelta(seconds=30)
    assert policy.next_attempt_at(2, "r", NOW) == NOW + timedelta(seconds=60)
    assert policy.next_attempt_at(3, "r", NOW) is None
    assert RetryPolicy(max_attempts=1).next_attempt_at(1, "r", NOW) is None


def test_a_huge_exponent_saturates_at_the_cap() -> None:
    policy = RetryPolicy(max_attempts=25, backoff_s=1e300, factor=10, max_backoff_s=1e300)
    assert policy.delay_s(24, "r") <= 1e300


@given(st.text(max_size=40), st.integers(min_value=1, max_value=25))
def test_jitter_is_a_fixed_fraction_within_half_and_whole(run_id: str, attempt: int) -> None:
    fraction = jitter_fraction(run_id, attempt)
    assert 0 <= fraction < 1 and fraction == jitter_fraction(run_id, attempt)
    policy = RetryPolicy(max_attempts=25, backoff_s=40, factor=1, max_backoff_s=40)
    assert 20 <= policy.delay_s(attempt, run_id) <= 40


def test_different_runs_spread_out() -> None:
    assert len({jitter_fraction(f"run-{i}", 1) for i in range(50)}) == 50


def test_a_stored_policy_is_read_with_defaults_and_an_unusable_one_is_none() -> None:
    assert retry_policy({"retry": {"max_attempts": 2}}) == RetryPolicy(max_attempts=2)
    assert retry_policy({}) is None
    assert retry_policy({"retry": {"max_attempts": "2"}}) is None  # stored, never validated


@pytest.mark.parametrize(
    "bad", [{"max_attempts": 26}, {"max_attempts": 2, "backoff_s": float("nan")}]
)
def test_validation_refuses_out_of_range_values(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as info:
        validate_retry(bad)
    assert info.value.code == "trigger_invalid"
