"""Action type name → its handler (SPEC §10): the nine types, one module each."""

from __future__ import annotations

from collections.abc import Mapping

from tocsin import messages
from tocsin.actions.api_call import ApiCall
from tocsin.actions.base import Action, ActionError
from tocsin.actions.invoke_command import InvokeCommand
from tocsin.actions.materialize_slots import MaterializeSlots
from tocsin.actions.notify import Notify
from tocsin.actions.records import CreateRecord, DeleteRecord, UpdateRecord
from tocsin.actions.start_workflow import StartWorkflow
from tocsin.actions.webhook import Webhook

ACTIONS: Mapping[str, Action] = {
    action.type: action
    for action in (
        Notify(),
        Webhook(),
        ApiCall(),
        CreateRecord(),
        UpdateRecord(),
        DeleteRecord(),
        InvokeCommand(),
        MaterializeSlots(),
        StartWorkflow(),
    )
}


def get_action(kind: object) -> Action:
    """The handler of ``kind``; a permanent ActionError for an unknown type."""
    action = ACTIONS.get(kind) if isinstance(kind, str) else None
    if action is None:
        raise ActionError(messages.unknown_action_type(kind))
    return action
