"""A workflow's definition hash: what ``definition_changed`` compares at sync (SPEC §13).

The hash covers what the workflow does: its stage layout and step ids, its input and output
schemas, and each step function's compiled code (bytecode, constants, names), so editing a
step's body changes it while reformatting or moving the file does not.
"""

from __future__ import annotations

import hashlib
import json
from types import CodeType
from typing import Any

from tocsin.workflows.definition import Workflow


def _const(value: object) -> Any:
    if isinstance(value, CodeType):
        return _code(value)
    if isinstance(value, frozenset):  # its repr's order depends on the process's hash seed
        return sorted(repr(v) for v in value)
    return repr(value)


def _code(code: CodeType) -> list[Any]:
    consts = [_const(c) for c in code.co_consts]
    return [code.co_code.hex(), consts, list(code.co_names)]


def _fn(fn: Any) -> Any:
    code = getattr(fn, "__code__", None)
    if isinstance(code, CodeType):
        return _code(code)
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


def definition_hash(wf: Workflow) -> str:
    """sha256 hex of the workflow's canonical description."""
    body = {
        "id": wf.id,
        "input": wf.input.model_json_schema() if wf.input is not None else None,
        "output": wf.output.model_json_schema() if wf.output is not None else None,
        "stages": [
            {"parallel": stage.parallel, "steps": [[s.id, _fn(s.fn)] for s in stage.steps]}
            for stage in wf.stages
        ],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["definition_hash"]
