"""tocsin.workflows: Python workflows with code-declared schedules (SPEC §12): their definitions
and their executor. They fire nothing of their own: the schedule passes are the engine's
(:mod:`tocsin.engine.schedules`, :mod:`tocsin.engine.trees`, :mod:`tocsin.engine.backfill`).

- :mod:`~tocsin.workflows.definition`: ``workflow``, ``step``, ``Schedule`` (definition-time checks)
- :mod:`~tocsin.workflows.execute`: one run's stages, receipts, suspend (``StepContext``)
- :mod:`~tocsin.workflows.sync`: declared schedules → schedule rows (the five outcomes)
- :mod:`~tocsin.workflows.hashing`: a workflow's definition hash (``definition_changed``)
- :mod:`~tocsin.workflows.loading`: ``module:attr`` → workflows (``--app``)
- :mod:`~tocsin.workflows.runner`: claim, execute and finish workflow runs
"""

from __future__ import annotations

from tocsin.workflows.definition import Schedule, Step, Workflow, step, workflow
from tocsin.workflows.execute import StepContext

__all__ = ["Schedule", "Step", "StepContext", "Workflow", "step", "workflow"]
