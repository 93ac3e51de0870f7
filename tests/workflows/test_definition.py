"""SPEC §12 definition time: ids, extended cron validation, host-zone warning, duplicates."""

from __future__ import annotations

import warnings

import pytest

from tocsin import ConfigError, Schedule, StepContext, step, workflow
from tocsin.workflows.host_zone import host_zone_name

from .helpers import ReportIn, ReportOut, daily, send_report


def test_public_surface_is_exported() -> None:
    import tocsin

    for name in ("workflow", "step", "Schedule", "StepContext", "Tocsin"):
        assert name in tocsin.__all__ and hasattr(tocsin, name)


def test_single_schedule_id_is_wf_and_workflow_id() -> None:
    (sched,) = daily().schedules
    assert sched.id == "wf_daily-report"
    assert (sched.cron, sched.timezone, sched.input_data) == (
        "0 9 * * *",
        "America/New_York",
        {"user_id": "system"},
    )


def test_array_ids_carry_each_schedule_id() -> None:
    wf = (
        workflow(
            id="status-check",
            schedule=[
                Schedule(id="morning", cron="0 9 * * *", timezone="UTC"),
                Schedule(id="evening", cron="0 18 * * *", timezone="UTC"),
            ],
        )
        .then(send_report)
        .commit()
    )
    assert [s.id for s in wf.schedules] == ["wf_status-check__morning", "wf_status-check__evening"]


def test_array_entries_need_unique_ids() -> None:
    with pytest.raises(ConfigError, match="duplicate schedule id 'wf_w__a'"):
        workflow(
            id="w",
            schedule=[
                Schedule(id="a", cron="0 9 * * *", timezone="UTC"),
                Schedule(id="a", cron="0 10 * * *", timezone="UTC"),
            ],
        )
    with pytest.raises(ConfigError, match="needs a unique, stable 'id'"):
        workflow(id="w", schedule=[Schedule(cron="0 9 * * *", timezone="UTC")])


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("0 9 * *", "cron schedule invalid: "),
        ("61 * * * *", "cron schedule invalid: "),
        ("0 0 30 2 *", "cron schedule invalid: "),
    ],
)
def test_bad_cron_raises_at_definition_with_the_cron_text(expr: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Schedule(cron=expr, timezone="UTC")
    assert caught.value.detail.startswith(reason)
    assert caught.value.code == "cron_expression_invalid"


def test_extended_dialect_is_accepted() -> None:
    for expr in (
        "0 0 9 ? * MON-FRI",
        "0 0 12 L * ? 2030",
        "0 9 * * 5L",
        "0 9 * * 1#2",
        "25/10 * * * *",
    ):
        Schedule(cron=expr, timezone="UTC")


def test_unknown_timezone_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a known IANA zone"):
        Schedule(cron="0 9 * * *", timezone="Mars/Olympus")


def test_no_timezone_uses_the_host_zone_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="explicit IANA timezone") as record:
        wf = workflow(id="local", schedule=Schedule(cron="0 9 * * *")).then(send_report).commit()
    assert "wf_local" in str(record[0].message)
    assert record[0].filename == __file__  # points at the user's definition
    assert wf.schedules[0].timezone == host_zone_name()


def test_an_explicit_timezone_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        daily()


def test_steps_and_workflow_shape_are_checked() -> None:
    with pytest.raises(ConfigError, match="duplicate step id 'send-report'"):
        workflow(id="w").then(send_report).then(send_report)
    with pytest.raises(ConfigError, match="has no steps"):
        workflow(id="w").commit()
    with pytest.raises(ConfigError, match="workflow id must be"):
        workflow(id="bad id")
    with pytest.raises(ConfigError, match="expected a step"):
        workflow(id="w").then(lambda d, c: d)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="longer than 64"):
        workflow(id="x" * 62, schedule=Schedule(cron="0 9 * * *", timezone="UTC"))


def test_step_decorator_keeps_the_function_callable() -> None:
    @step(id="double", input=ReportIn, output=ReportOut)
    def double(data: ReportIn, ctx: StepContext) -> ReportOut:
        return ReportOut(ok=True, user_id=data.user_id * 2)

    assert double(ReportIn(user_id="a"), None).user_id == "aa"


def test_catch_up_and_max_catch_up_are_validated() -> None:
    with pytest.raises(ConfigError):
        Schedule(cron="* * * * *", timezone="UTC", catch_up="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Schedule(cron="* * * * *", timezone="UTC", max_catch_up=0)
