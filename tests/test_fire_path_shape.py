"""The one fire path (DESIGN §1): the ledger claim is called from ``engine.fire`` only."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "tocsin"
ALLOWED = {"store/ledger.py", "engine/fire.py"}


def test_the_ledger_claim_is_referenced_only_by_the_ledger_and_the_fire_path() -> None:
    holders = {
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "claim_occurrences" in path.read_text(encoding="utf-8")
    }
    assert holders == ALLOWED
