"""``module:attr`` → workflows: what ``--app`` / ``TOCSIN_APP`` names (SPEC §16).

``attr`` is a ``Tocsin`` opened with ``workflows=[...]`` (its registry is used), a list or tuple
of committed workflows, or one workflow. Importing runs the user's module: its definitions are
checked then (a bad cron raises there, with the SPEC text).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path

from tocsin import messages
from tocsin.errors import ValidationError
from tocsin.workflows.definition import Workflow


def load_workflows(spec: str) -> list[Workflow]:
    """The workflows ``spec`` (``package.module:attr``) names; ValidationError when it cannot."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValidationError(messages.app_spec_invalid(spec))
    cwd = str(Path.cwd())
    if cwd not in sys.path:  # like `python -m`: the working directory's modules are importable
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValidationError(messages.app_module_unimportable(module_name, exc)) from None
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ValidationError(messages.app_attribute_missing(module_name, attr))
        target = getattr(target, part)
    return _workflows_of(target, spec)


def _workflows_of(target: object, spec: str) -> list[Workflow]:
    if isinstance(target, Workflow):
        return [target]
    registry = getattr(target, "workflows", None)
    if isinstance(registry, Mapping):
        target = list(registry.values())
    if isinstance(target, list | tuple) and all(isinstance(w, Workflow) for w in target):
        return list(target)
    raise ValidationError(messages.app_not_workflows(spec))


__all__ = ["load_workflows"]
