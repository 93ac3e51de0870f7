"""tocsin.workflows: Python workflows with code-declared schedules (SPEC §12).

- :mod:`~tocsin.workflows.definition`: ``workflow``, ``step``, ``Schedule`` (definition-time checks)
- :mod:`~tocsin.workflows.execute`: one run's stages, receipts, suspend (``StepContext``)
- :mod:`~tocsin.workflows.sync`: declared schedules → schedule rows (the five outcomes)
- :mod:`~tocsin.workflows.firing`: ``fire_due_schedules`` (the tick's schedule pass)
- :mod:`~tocsin.workflows.runner`: claim, execute and finish workflow runs
"""

from __future__ import annotations

from tocsin.workflows.definition import Schedule, Step, Workflow, step, workflow
from tocsin.workflows.execute import StepContext

__all__ = ["Schedule", "Step", "StepContext", "Workflow", "step", "workflow"]
