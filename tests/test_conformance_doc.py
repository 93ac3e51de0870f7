"""``docs/conformance.md`` names real tests: every ``path::name`` it cites (under ``tests/``) is a
test function in that file (a renamed or deleted test makes the list lie)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITED = re.compile(r"`([\w/]+\.py)::(\w+)")


def test_every_test_the_conformance_list_cites_exists() -> None:
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    cited = set(CITED.findall(text))
    assert len(cited) > 100
    missing = [
        f"{path}::{name}"
        for path, name in sorted(cited)
        if not (ROOT / "tests" / path).exists()
        or not re.search(
            rf"^\s*def {name}\(", (ROOT / "tests" / path).read_text(encoding="utf-8"), re.M
        )
    ]
    assert missing == []
