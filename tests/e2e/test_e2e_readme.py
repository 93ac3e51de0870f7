"""README's "first minute" examples work as written: the shell blocks that follow
"In a second shell" (curl) and "The same operations from the command line" run, unchanged,
with ``bash -e -o pipefail`` against ``tocsin demo``.

Every line the curl block prints must be a JSON answer that is not an error, and the last one
(the runs of the table the block creates) must list its first run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.net import free_port
from support.processes import TOCSIN
from support.waiting import wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MARKER = "In a second shell"
CLI_MARKER = "The same operations from the command line"


def readme_block(marker: str) -> str:
    """The first ``sh`` code block after ``marker`` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(marker) :]
    match = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert match is not None, "README lost its curl examples"
    return match.group(1)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[dict[str, str]]:
    """``tocsin demo`` serving from ``tmp_path``; yields the environment of a newcomer's shell."""
    port = free_port()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    env.pop("TOCSIN_ADMIN_TOKEN", None)  # the demo makes one up, as on a newcomer's machine
    env.pop("TOCSIN_DATABASE_URL", None)
    log = (tmp_path / "demo.log").open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "demo", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for("the demo server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        yield env
        assert proc.send_signal(signal.SIGINT) is None and proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)  # reaped: no zombie, no ResourceWarning
        log.close()
        print((tmp_path / "demo.log").read_text())


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README examples use curl")
def test_the_readme_curl_examples_work_as_written(tmp_path: Path, demo: dict[str, str]) -> None:
    block = readme_block(MARKER)
    shell = run_block(block, tmp_path, demo)
    assert shell.returncode == 0, shell.stderr
    answers = [json.loads(line) for line in shell.stdout.splitlines() if line.strip()]
    printing = [line for line in block.splitlines() if line.startswith("curl ")]
    assert len(answers) == len(printing), shell.stdout
    assert not [a for a in answers if "detail" in a], shell.stdout
    assert answers[-1]["total"] >= 1, "the new table's first run is not there"


def test_the_readme_command_line_examples_work_as_written(
    tmp_path: Path, demo: dict[str, str]
) -> None:
    """Run from the checkout, where ``.venv/bin/tocsin`` lives, in a shell that sourced the env."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    block = "source tocsin-demo.env\n" + readme_block(CLI_MARKER)
    shell = run_block(block, tmp_path, demo)
    assert shell.returncode == 0, shell.stderr
    assert "run(s)" in shell.stdout  # runs list
    assert '"runs_created"' in shell.stdout  # tick
    token = shell.stdout.strip().splitlines()[-1]  # tokens create: the token alone, last
    assert " " not in token and len(token) >= 32
