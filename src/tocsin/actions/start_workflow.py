"""``start_workflow``: start a registered workflow with templated input (SPEC §10, §12).

Config: ``workflow_id`` and optional ``input`` (templated). The facade's workflow starter
(``ActionEnv.workflows``) enqueues a pending workflow run through the same path as a manual
``start_workflow`` or a scheduled fire; the receipt detail names the run. An unknown workflow id
fails the action with a clear error (never a pretended success), and so does one a tenant saved
whose workflow is out of its reach now (``ActionContext.check_reach``): nothing is started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, require_str


class StartWorkflow:
    type = "start_workflow"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        workflow_id = str(ctx.render(require_str(config, "workflow_id", self.type)))
        ctx.check_reach(config, self.type, workflow_id)
        payload = ctx.render(config.get("input", {}))
        if ctx.env.workflows is None:
            raise ActionError(messages.workflow_unknown(workflow_id))
        try:
            run_id = ctx.env.workflows(workflow_id, payload, now=ctx.now)
        except LookupError as exc:
            raise ActionError(str(exc.args[0] if exc.args else exc)) from None
        return f"started workflow {workflow_id}: run {run_id}"
