"""``invoke_command``: call a registered Python command with templated inputs (SPEC §10, §9.5).

Config: ``command`` (a name given to ``Tocsin.register_command``) and ``inputs`` (an object of
templated values). The command is called as ``fn(inputs)`` and returns a JSON-able result.

Idempotency key ``tocsin-<run id>-<action id>`` (``store.commands``): before calling, the key is
reserved; a key that already succeeded answers with its stored result and the command is *not*
called again (a retry after a crash between the call and the receipt); a failed attempt releases
its reservation, so the in-place transient retry and a moderator retry reuse the same key.

Recordless runs (interval/daily) refuse any input holding a ``$row`` token (SPEC §4.5). One a
tenant saved whose command is out of its reach now fails first (``ActionContext.check_reach``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, CommandFn, require_str
from tocsin.core.config.templates import has_row_tokens
from tocsin.errors import TransientStoreError
from tocsin.store.commands import complete_command, release_command, reserve_command
from tocsin.store.errors import is_transient


def rendered_inputs(ctx: ActionContext, config: Mapping[str, Any]) -> dict[str, Any]:
    inputs = config.get("inputs") or {}
    if not isinstance(inputs, Mapping):
        raise ActionError(messages.INVOKE_INPUTS_NOT_OBJECT)
    if ctx.recordless:
        for name, value in inputs.items():
            if has_row_tokens(value):
                raise ActionError(messages.invoke_command_row_input(str(name)))
    return dict(ctx.render(dict(inputs)))


def json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def describe(name: str, result: Any, *, replayed: bool) -> str:
    text = json.dumps(result, ensure_ascii=False, default=str)
    return f"command {name} {'already succeeded' if replayed else 'returned'}: {text}"


class InvokeCommand:
    type = "invoke_command"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        name = require_str(config, "command", self.type)
        ctx.check_reach(config, self.type, name)  # a tenant's action: is it still allowed?
        fn = ctx.env.commands.get(name)
        if fn is None:
            raise ActionError(messages.command_not_registered(name))
        inputs = rendered_inputs(ctx, config)
        key = ctx.idempotency_key
        with ctx.env.store.begin() as tx:
            slot = reserve_command(
                tx, key=key, command=name, now=ctx.now, stale_after_s=ctx.env.stale_after_s
            )
        if slot.state == "succeeded":
            return describe(name, slot.result, replayed=True)
        if slot.state == "busy":
            raise ActionError(messages.command_key_busy(name, key), permanent=False)
        result = self._call(ctx, name, fn, inputs, key)
        return describe(name, result, replayed=False)

    @staticmethod
    def _call(
        ctx: ActionContext, name: str, fn: CommandFn, inputs: dict[str, Any], key: str
    ) -> Any:
        try:
            result = json_safe(fn(inputs))
        except BaseException as exc:
            with ctx.env.store.begin() as tx:
                release_command(tx, key=key)
            if isinstance(exc, ActionError | TransientStoreError):
                raise
            if not isinstance(exc, Exception | SystemExit):  # Ctrl-C still stops the worker
                raise
            # a command calling sys.exit() fails its run; it does not stop the worker
            if is_transient(exc):  # a lock conflict inside the command: retried, same key
                raise TransientStoreError(messages.command_conflict(name, exc)) from exc
            raise ActionError(messages.command_failed(name, exc)) from exc
        _store_result(ctx, key, result)
        return result


STORE_ATTEMPTS = 3


def _store_result(ctx: ActionContext, key: str, result: Any) -> None:
    """``reserved → succeeded``, retried here on lock conflicts: the command already ran, and a
    retry of the whole action would find the key still reserved (busy) and could only fail."""
    for attempt in range(1, STORE_ATTEMPTS + 1):
        try:
            with ctx.env.store.begin() as tx:
                complete_command(tx, key=key, result=result, now=ctx.now)
            return
        except TransientStoreError:
            if attempt == STORE_ATTEMPTS:
                raise
            time.sleep(0.05 * attempt)
