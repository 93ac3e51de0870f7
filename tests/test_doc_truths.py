"""What README.md and docs/guide.md say matches what tocsin does: the error a bad workflow cron
raises, and every field of every action type in the guide's action table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tocsin import Schedule, workflow
from tocsin.core.config.action_fields import ACTION_FIELDS
from tocsin.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_names_the_error_a_bad_workflow_cron_raises() -> None:
    with pytest.raises(ConfigError) as caught:
        workflow(id="bad-cron", schedule=Schedule(cron="61 * * * *", timezone="UTC"))
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    bullet = next(b for b in readme.split("\n- ") if b.startswith("`cron` takes the extended"))
    named = set(re.findall(r"`(\w+Error)`", bullet))
    assert type(caught.value).__name__ in named, bullet  # CronError, not only its base
    classes = {c.__name__ for c in type(caught.value).__mro__}
    assert named <= classes, f"{sorted(named - classes)} are not what it raises"
    assert str(caught.value).startswith("cron schedule invalid: ")
    assert "cron schedule invalid: " in bullet


def _action_rows() -> dict[str, str]:
    """``type`` → its required and optional columns, from the guide's action table."""
    guide = ROOT.joinpath("docs", "guide.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (.*?) \| (.*?) \| .*\|$", guide, re.M)
    return {kind: f"{required} {optional}" for kind, required, optional in rows}


@pytest.mark.parametrize("kind", sorted(ACTION_FIELDS))
def test_the_guides_action_table_lists_every_field(kind: str) -> None:
    rows = _action_rows()
    assert kind in rows, f"the guide's action table has no {kind} row"
    required, optional = ACTION_FIELDS[kind]
    listed = set(re.findall(r"`(\w+)`", rows[kind]))
    missing = sorted((set(required) | set(optional)) - listed)
    assert not missing, f"{kind}: the guide omits {missing}"
