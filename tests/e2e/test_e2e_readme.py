"""README's "first minute" examples work as written (issue 5): the shell block that follows
"In a second shell" runs, unchanged, with ``bash -e -o pipefail`` against ``tocsin demo``.

Every line it prints must be a JSON answer that is not an error, and the last one (the runs of
the table the block creates) must list its first run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOCSIN = str(Path(sys.executable).parent / "tocsin")
MARKER = "In a second shell"


def readme_block() -> str:
    """The first ``sh`` code block after MARKER in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(MARKER) :]
    match = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert match is not None, "README lost its curl examples"
    return match.group(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(base: str, timeout: float = 45.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("the demo server did not start")


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README examples use curl")
def test_the_readme_curl_examples_work_as_written(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    env.pop("TOCSIN_ADMIN_TOKEN", None)  # the demo makes one up, as on a newcomer's machine
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
        wait_until_serving(base)
        block = readme_block()
        shell = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shell.returncode == 0, shell.stderr
        answers = [json.loads(line) for line in shell.stdout.splitlines() if line.strip()]
        printing = [line for line in block.splitlines() if line.startswith("curl ")]
        assert len(answers) == len(printing), shell.stdout
        assert not [a for a in answers if "detail" in a], shell.stdout
        assert answers[-1]["total"] >= 1, "the new table's first run is not there"
        assert proc.send_signal(signal.SIGINT) is None and proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
        print((tmp_path / "demo.log").read_text())
