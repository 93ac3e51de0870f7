"""``start_workflow``: start a registered workflow with templated input (SPEC §10, §12).

Config: ``workflow_id`` and optional ``input`` (templated). When the facade has a workflow starter
(``ActionEnv.workflows``), the workflow is started and its run id is the receipt detail. Until
workflows exist (SPEC §12 lands later) there is no starter: the action records the *pending
request* — workflow id and rendered input — in its receipt detail and succeeds, so a later
workflow engine (or an operator) can pick the request up from the run's receipts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tocsin.actions.base import ActionContext, require_str


class StartWorkflow:
    type = "start_workflow"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        workflow_id = str(ctx.render(require_str(config, "workflow_id", self.type)))
        payload = ctx.render(config.get("input", {}))
        if ctx.env.workflows is not None:
            run_id = ctx.env.workflows(workflow_id, payload, now=ctx.now)
            return f"started workflow {workflow_id}: run {run_id}"
        text = json.dumps(payload, ensure_ascii=False, default=str)
        return f"workflow start requested (pending): {workflow_id} input={text}"
