"""SPEC §12 step models: what a step returns is validated by its output model from its plain
form (an unvalidated or wider instance is not taken on trust); what this pass validated is
handed on as the instance (to the next step, or as the run's output), and each step of a
parallel group gets an instance of its own."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_serializer

from tocsin import StepContext, step, workflow
from tocsin.service import Tocsin

from .helpers import NOW


class Box(BaseModel):
    n: int


class Count(BaseModel):
    n: int = Field(ge=0)


class WideBox(Box):
    secret: str = "kept out"


def _run(tocsin: Tocsin, wf: Any, data: dict[str, Any]) -> dict[str, Any]:
    tocsin.register_workflows([wf])
    run: dict[str, Any] = tocsin.start_workflow(wf.id, data, now=NOW)
    return run


def test_the_next_step_gets_the_validated_instance_of_its_input_model(tocsin: Tocsin) -> None:
    seen: list[Any] = []

    @step(id="first", input=Box, output=Box)
    def first(data: Box, ctx: StepContext) -> Box:
        seen.append(data)
        return Box(n=data.n + 1)

    @step(id="second", input=Box, output=Box)
    def second(data: Box, ctx: StepContext) -> Box:
        seen.append(data)
        data.n = 100  # a step may change what it got: the receipts keep what was handed on
        return Box(n=data.n + 1)

    wf = workflow(id="boxes", input=Box, output=Box).then(first).then(second).commit()
    run = _run(tocsin, wf, {"n": 1})
    assert [type(d) for d in seen] == [Box, Box]
    assert [r["output"] for r in run["steps"]] == [{"n": 2}, {"n": 101}]
    assert (run["status"], run["output"]) == ("success", {"n": 101})


def test_an_unvalidated_output_instance_fails_the_step(tocsin: Tocsin) -> None:
    @step(id="sloppy", input=Count, output=Count)
    def sloppy(data: Count, ctx: StepContext) -> Count:
        return Count.model_construct(n=-5)  # built without validation: out of its bounds

    wf = workflow(id="sloppy", input=Count, output=Count).then(sloppy).commit()
    run = _run(tocsin, wf, {"n": 1})
    assert run["status"] == "failed"
    assert run["steps"][0]["status"] == "failed"
    assert "1 validation error for Count" in run["steps"][0]["error"]
    assert "greater than or equal to 0" in run["steps"][0]["error"]


def test_a_wider_output_instance_is_reduced_to_the_declared_model(tocsin: Tocsin) -> None:
    @step(id="wide", input=Box, output=Box)
    def wide(data: Box, ctx: StepContext) -> Box:
        return WideBox(n=data.n, secret="s3cret")

    wf = workflow(id="wide", input=Box, output=Box).then(wide).commit()
    run = _run(tocsin, wf, {"n": 7})
    assert run["steps"][0]["output"] == {"n": 7}
    assert (run["status"], run["output"]) == ("success", {"n": 7})


class Doubled(BaseModel):
    n: int

    @field_serializer("n")
    def _twice(self, n: int) -> int:
        return 2 * n


def test_the_runs_output_is_its_last_steps_as_dumped_when_of_the_workflows_model(
    tocsin: Tocsin,
) -> None:
    @step(id="double", input=Box, output=Doubled)
    def double(data: Box, ctx: StepContext) -> Doubled:
        return Doubled(n=data.n)

    wf = workflow(id="double", input=Box, output=Doubled).then(double).commit()
    run = _run(tocsin, wf, {"n": 3})
    assert run["steps"][0]["output"] == {"n": 12}  # (checked from its dump {"n": 6}: n is 6)
    assert (run["status"], run["output"]) == ("success", run["steps"][0]["output"])


def test_the_runs_output_is_checked_by_the_workflows_model_when_its_last_step_has_another(
    tocsin: Tocsin,
) -> None:
    @step(id="negate", input=Box, output=Box)
    def negate(data: Box, ctx: StepContext) -> Box:
        return Box(n=-data.n)

    wf = workflow(id="negate", input=Box, output=Count).then(negate).commit()
    run = _run(tocsin, wf, {"n": 3})
    assert run["steps"][0] | {"started_at": 0, "ended_at": 0} == {
        "id": "negate",
        "status": "success",
        "output": {"n": -3},
        "error": None,
        "started_at": 0,
        "ended_at": 0,
    }
    assert run["status"] == "failed" and run["output"] is None
    assert "workflow output invalid" in run["error"]
    assert "greater than or equal to 0" in run["error"]


def test_each_parallel_step_gets_an_input_instance_of_its_own(tocsin: Tocsin) -> None:
    got: dict[str, int] = {}

    def bumping(step_id: str) -> Any:
        @step(id=step_id, input=Box, output=Box)
        def bump(data: Box, ctx: StepContext) -> Box:
            data.n += 10  # were the instance shared, the other step would see it
            got[step_id] = data.n
            return Box(n=data.n)

        return bump

    wf = (
        workflow(id="fan", input=Box)
        .then(step(id="seed", input=Box, output=Box)(lambda data, ctx: Box(n=data.n)))
        .parallel([bumping("a"), bumping("b")])
        .commit()
    )
    run = _run(tocsin, wf, {"n": 1})
    assert got == {"a": 11, "b": 11}
    assert (run["status"], run["output"]) == ("success", {"a": {"n": 11}, "b": {"n": 11}})
