"""DESIGN §4 settings: read once from an injected environ; malformed values refuse to start."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tocsin.errors import SettingsError
from tocsin.service.base import pool_specs
from tocsin.settings import Settings
from tocsin.store import pools


def test_defaults() -> None:
    s = Settings.from_environ({})
    assert s.database_url == "sqlite:///tocsin.db"
    assert s.admin_token is None
    assert s.outbound_allow == ()
    assert (s.stuck_after_s, s.tick_every_s) == (300, 30.0)
    assert (s.action_timeout_s, s.action_timeout_max_s, s.worker_concurrency) == (10.0, 60.0, 8)


def test_values_are_read_from_the_given_mapping() -> None:
    s = Settings.from_environ(
        {
            "TOCSIN_DATABASE_URL": "postgresql://x/y",
            "TOCSIN_ADMIN_TOKEN": "sesame",
            "TOCSIN_OUTBOUND_ALLOW": " 127.0.0.1, 10.0.0.0/8 ,,",
            "TOCSIN_STUCK_AFTER_S": "60",
            "TOCSIN_TICK_EVERY_S": "0.5",
            "TOCSIN_ACTION_TIMEOUT_S": "2.5",
            "TOCSIN_ACTION_TIMEOUT_MAX_S": "30",
            "TOCSIN_WORKER_CONCURRENCY": "3",
        }
    )
    assert s.database_url == "postgresql://x/y"
    assert s.admin_token == "sesame"
    assert s.outbound_allow == ("127.0.0.1", "10.0.0.0/8")
    assert (s.stuck_after_s, s.tick_every_s) == (60, 0.5)
    assert (s.action_timeout_s, s.action_timeout_max_s, s.worker_concurrency) == (2.5, 30.0, 3)


@pytest.mark.parametrize(
    "entry",
    ["127.0.0.1:9000", "[::1]:9000", "fd00::1", "10.0.0.0/8:443", "hooks.local", "Hooks.Local:80"],
)
def test_well_formed_outbound_allow_entries_are_kept(entry: str) -> None:
    assert Settings.from_environ({"TOCSIN_OUTBOUND_ALLOW": entry}).outbound_allow == (entry,)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("http://hooks.local", "not a host name, an IP address or a CIDR (optionally with :port)"),
        ("hooks.local:8o80", "not a host name, an IP address or a CIDR (optionally with :port)"),
        ("*.example.com", "not a host name, an IP address or a CIDR (optionally with :port)"),
        ("hooks.local:70000", "port 70000 is not in 1-65535"),
        ("[::1]:port", "a bracketed IPv6 address takes a numeric :port"),
    ],
)
def test_a_malformed_outbound_allow_entry_refuses_to_start_naming_it(
    entry: str, problem: str
) -> None:
    """A typo used to be ignored: nothing was allowed, and every refusal at run time told the
    operator to set the variable they believed they had set."""
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({"TOCSIN_OUTBOUND_ALLOW": f"127.0.0.1, {entry}"})
    assert err.value.detail == f"TOCSIN_OUTBOUND_ALLOW entry {entry!r}: {problem}"


def test_an_empty_admin_token_means_none() -> None:
    assert Settings.from_environ({"TOCSIN_ADMIN_TOKEN": ""}).admin_token is None


@pytest.mark.parametrize("value", ["0", "-5", "soon", "nan", "inf"])
@pytest.mark.parametrize(
    "name",
    [
        "TOCSIN_TICK_EVERY_S",
        "TOCSIN_STUCK_AFTER_S",
        "TOCSIN_ACTION_TIMEOUT_S",
        "TOCSIN_ACTION_TIMEOUT_MAX_S",
    ],
)
def test_malformed_periods_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({name: value})
    assert err.value.detail == f"{name} must be a positive number of seconds, got {value!r}"


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "many", "²"])
def test_a_malformed_worker_concurrency_names_the_variable(value: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({"TOCSIN_WORKER_CONCURRENCY": value})
    assert (
        err.value.detail
        == f"TOCSIN_WORKER_CONCURRENCY must be a positive whole number, got {value!r}"
    )


@pytest.mark.parametrize(
    ("environ", "cap"),
    [
        ({}, 7),  # one thread less than the default 8: another scope always finds one
        ({"TOCSIN_WORKER_CONCURRENCY": "3"}, 2),
        ({"TOCSIN_WORKER_CONCURRENCY": "1"}, 1),  # at least 1
        ({"TOCSIN_MAX_RUNNING_PER_SCOPE": "5"}, 5),
        ({"TOCSIN_MAX_RUNNING_PER_SCOPE": "12", "TOCSIN_WORKER_CONCURRENCY": "4"}, 12),
    ],
)
def test_the_running_runs_per_scope_default_to_one_less_than_the_concurrency(
    environ: dict[str, str], cap: int
) -> None:
    assert Settings.from_environ(environ).per_scope_cap == cap


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_a_malformed_running_runs_per_scope_names_the_variable(value: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({"TOCSIN_MAX_RUNNING_PER_SCOPE": value})
    assert (
        err.value.detail
        == f"TOCSIN_MAX_RUNNING_PER_SCOPE must be a positive whole number, got {value!r}"
    )


def test_the_cli_reports_a_malformed_setting_in_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from tocsin.cli import main; main()", "tick"],
        env={"TOCSIN_TICK_EVERY_S": "0", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: TOCSIN_TICK_EVERY_S must be a positive number of seconds, got '0'"
    )


LIMITS = {
    "TOCSIN_MAX_RENDERED_BYTES": ("max_rendered_bytes", 64 * 1024),
    "TOCSIN_MAX_RECORD_BYTES": ("max_record_bytes", 256 * 1024),
    "TOCSIN_MAX_COLUMNS": ("max_columns", 200),
    "TOCSIN_MAX_COLUMN_NAME_CHARS": ("max_column_name_chars", 64),
    "TOCSIN_MAX_TRIGGERS_PER_TABLE": ("max_triggers_per_table", 100),
    "TOCSIN_MAX_ACTIONS_PER_TRIGGER": ("max_actions_per_trigger", 20),
    "TOCSIN_STUDIO_FIRES_PER_PAGE": ("studio_fires_per_page", 20),
    "TOCSIN_BACKFILL_MAX_INSTANTS": ("backfill_max_instants", 1_000_000),
}


@pytest.mark.parametrize("name", LIMITS)
def test_limits_have_defaults_and_are_read(name: str) -> None:
    field, default = LIMITS[name]
    assert getattr(Settings.from_environ({}), field) == default
    assert getattr(Settings(), field) == default
    assert getattr(Settings.from_environ({name: " 7 "}), field) == 7


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "lots"])
def test_malformed_limits_name_the_variable(value: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({"TOCSIN_MAX_RECORD_BYTES": value})
    assert err.value.detail == (
        f"TOCSIN_MAX_RECORD_BYTES must be a positive whole number, got {value!r}"
    )


def test_the_sqlite_size_cap_and_the_outage_backoff_cap() -> None:
    assert (Settings().sqlite_max_bytes, Settings().db_backoff_max_s) == (None, 30.0)
    read = Settings.from_environ(
        {"TOCSIN_SQLITE_MAX_BYTES": "1048576", "TOCSIN_DB_BACKOFF_MAX_S": "2.5"}
    )
    assert (read.sqlite_max_bytes, read.db_backoff_max_s) == (1048576, 2.5)
    with pytest.raises(SettingsError, match="TOCSIN_SQLITE_MAX_BYTES"):
        Settings.from_environ({"TOCSIN_SQLITE_MAX_BYTES": "-1"})
    with pytest.raises(SettingsError, match="TOCSIN_DB_BACKOFF_MAX_S"):
        Settings.from_environ({"TOCSIN_DB_BACKOFF_MAX_S": "0"})


POOLS = {  # PostgreSQL: the API's, the worker's and the ticker's pools (tocsin.store.pools)
    "TOCSIN_API_POOL_SIZE": ("api_pool_size", 10),
    "TOCSIN_WORKER_POOL_SIZE": ("worker_pool_size", None),  # TOCSIN_WORKER_CONCURRENCY + 2
    "TOCSIN_TICKER_POOL_SIZE": ("ticker_pool_size", 3),
    "TOCSIN_API_LOCK_TIMEOUT_S": ("api_lock_timeout_s", 2.0),
    "TOCSIN_API_STATEMENT_TIMEOUT_S": ("api_statement_timeout_s", 10.0),
    "TOCSIN_WORKER_LOCK_TIMEOUT_S": ("worker_lock_timeout_s", 30.0),
    "TOCSIN_WORKER_STATEMENT_TIMEOUT_S": ("worker_statement_timeout_s", 120.0),
    "TOCSIN_TICKER_LOCK_TIMEOUT_S": ("ticker_lock_timeout_s", 30.0),
    "TOCSIN_TICKER_STATEMENT_TIMEOUT_S": ("ticker_statement_timeout_s", 120.0),
}


@pytest.mark.parametrize("name", POOLS)
def test_pools_have_defaults_and_are_read(name: str) -> None:
    field, default = POOLS[name]
    assert getattr(Settings.from_environ({}), field) == default
    assert getattr(Settings(), field) == default
    assert getattr(Settings.from_environ({name: " 7 "}), field) == 7


def test_the_worker_pool_follows_the_worker_concurrency_unless_set() -> None:
    def worker_pool(env: dict[str, str]) -> int:
        return pool_specs(Settings.from_environ(env))[pools.WORKER].size

    assert worker_pool({}) == 10
    assert worker_pool({"TOCSIN_WORKER_CONCURRENCY": "16"}) == 18
    assert worker_pool({"TOCSIN_WORKER_CONCURRENCY": "16", "TOCSIN_WORKER_POOL_SIZE": "4"}) == 4


def test_a_zero_timeout_means_none_and_a_fraction_is_kept() -> None:
    s = Settings.from_environ(
        {"TOCSIN_API_LOCK_TIMEOUT_S": "0", "TOCSIN_API_STATEMENT_TIMEOUT_S": "0.25"}
    )
    assert (s.api_lock_timeout_s, s.api_statement_timeout_s) == (0.0, 0.25)


@pytest.mark.parametrize("value", ["-1", "soon", "inf", "nan"])
def test_malformed_timeouts_name_the_variable(value: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_environ({"TOCSIN_WORKER_LOCK_TIMEOUT_S": value})
    assert err.value.detail == (
        f"TOCSIN_WORKER_LOCK_TIMEOUT_S must be a number of seconds >= 0 (0: no limit), "
        f"got {value!r}"
    )


def test_the_slot_look_of_the_worker() -> None:
    assert Settings().slot_look_s == Settings.from_environ({}).slot_look_s == 0.01
    read = Settings.from_environ({"TOCSIN_SLOT_LOOK_S": "0.5"})
    assert read.slot_look_s == 0.5
    with pytest.raises(SettingsError, match="TOCSIN_SLOT_LOOK_S"):
        Settings.from_environ({"TOCSIN_SLOT_LOOK_S": "0"})
