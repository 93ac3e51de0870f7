"""``start_workflow``: start a registered workflow with templated input (SPEC §10, §12).

Config: ``workflow_id`` and optional ``input`` (templated). The facade's workflow starter
(``ActionEnv.workflows``) inserts the pending workflow run a manual ``start_workflow`` makes, in
the transaction that stores the action's receipt (a
:class:`~tocsin.actions.base.TransactionalAction`): child run and receipt commit together, so a
parent retried after a crash never starts a second child, and a parent whose receipt is not
written (its claim was lost) leaves none. The receipt detail names the run. An unknown workflow
id fails the action with a clear error (never a pretended success), and so does one a tenant
saved whose workflow is out of its reach now (``ActionContext.check_reach``): nothing is started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, require_str
from tocsin.store.tx import Tx


class StartWorkflow:
    type = "start_workflow"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        with ctx.env.store.begin() as tx:
            return self.execute_in(tx, ctx, config)

    def execute_in(self, tx: Tx, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        workflow_id = str(ctx.render(require_str(config, "workflow_id", self.type)))
        ctx.check_reach(config, self.type, workflow_id)
        payload = ctx.render(config.get("input", {}))
        if ctx.env.workflows is None:
            raise ActionError(messages.workflow_unknown(workflow_id))
        try:
            run_id = ctx.env.workflows(tx, workflow_id, payload, now=ctx.now)
        except LookupError as exc:
            raise ActionError(str(exc.args[0] if exc.args else exc)) from None
        return f"started workflow {workflow_id}: run {run_id}"
