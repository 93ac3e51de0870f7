"""The ``tocsin`` command (SPEC §16)."""

from __future__ import annotations


def main() -> None:
    """Entry point of the console script (filled in by the CLI work)."""
    raise SystemExit("tocsin: the command line is not built yet")
