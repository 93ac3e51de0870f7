"""``tocsin secrets rotate --scope chatroom:<uuid>``: a new signing secret, in force at once,
printed alone on the last line."""

from __future__ import annotations

import uuid

import pytest

from support.cli import runner
from tocsin.cli import app
from tocsin.service import Tocsin


def test_rotate_prints_the_new_secret_which_is_the_scopes(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    scope_id = str(uuid.uuid4())
    first = runner.invoke(app, ["secrets", "rotate", "--scope", f"chatroom:{scope_id}"])
    assert first.exit_code == 0, first.output
    secret = first.output.strip().splitlines()[-1]
    assert secret.startswith("whsec_") and tocsin.signing_secret("chatroom", scope_id) == secret
    again = runner.invoke(app, ["secrets", "rotate", "--scope", f"chatroom:{scope_id}"])
    rotated = again.output.strip().splitlines()[-1]
    assert rotated != secret and tocsin.signing_secret("chatroom", scope_id) == rotated


@pytest.mark.parametrize("scope", ["chatroom:not-a-uuid", "galaxy:" + str(uuid.UUID(int=1))])
def test_rotate_refuses_a_bad_scope(env: dict[str, str], scope: str) -> None:
    result = runner.invoke(app, ["secrets", "rotate", "--scope", scope])
    assert result.exit_code == 2 and "error:" in result.output
