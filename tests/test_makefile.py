"""``make run`` installs runtime dependencies only; test/lint/bench add the dev tools.

Checked with ``make -n`` (print, do not run) in a copy of the Makefile and pyproject without a
virtualenv: what a fresh clone would do."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dry_run(target: str, tmp_path: Path) -> list[str]:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # as a fresh shell would: under `make test` the inherited MAKELEVEL/MAKEFLAGS make the
    # child print "make[1]: Entering directory" lines
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(
        ["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.splitlines()


def test_make_run_from_a_fresh_clone_installs_runtime_dependencies_only(tmp_path: Path) -> None:
    lines = dry_run("run", tmp_path)
    installs = [line for line in lines if "pip install -e" in line]
    assert installs == [".venv/bin/pip install -e ."]
    assert lines[-1].startswith(".venv/bin/tocsin demo")


def test_make_test_from_a_fresh_clone_installs_the_dev_tools_first(tmp_path: Path) -> None:
    lines = dry_run("test", tmp_path)
    installs = [line for line in lines if "pip install -e" in line]
    assert installs == [".venv/bin/pip install -e .", ".venv/bin/pip install -e '.[dev]'"]
    assert lines.index(installs[-1]) < next(i for i, x in enumerate(lines) if "ruff check" in x)
