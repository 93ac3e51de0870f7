"""``tocsin serve``: it exits 1 when its background could not stop cleanly (a run may be left
``running``), 0 otherwise (uvicorn replaced by a stand-in that runs no server); as a real
process, it syncs ``--app``'s schedules once and logs what that sync did."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer

from support.net import free_port
from support.processes import TOCSIN
from support.waiting import wait_for
from tocsin.cli import processes


@pytest.mark.parametrize(("verdict", "code"), [(True, None), (None, None), (False, 1)])
def test_serve_exits_non_zero_only_on_an_unclean_stop(
    monkeypatch: pytest.MonkeyPatch, verdict: bool | None, code: int | None
) -> None:
    app = SimpleNamespace(state=SimpleNamespace(stopped_cleanly=None))
    served: list[Any] = []

    def run(served_app: Any, **kwargs: Any) -> None:  # what the lifespan leaves behind
        served.append(served_app)
        served_app.state.stopped_cleanly = verdict

    monkeypatch.setattr(processes, "configure_logging", lambda: None)
    monkeypatch.setattr(processes.signal, "signal", lambda *args: None)
    monkeypatch.setattr(processes, "import_from_string", lambda name: lambda: app)
    monkeypatch.setattr(processes.uvicorn, "run", run)
    if code is None:
        processes.run_server(processes.SERVED_APP, "127.0.0.1", 0)
    else:
        with pytest.raises(typer.Exit) as exit_:
            processes.run_server(processes.SERVED_APP, "127.0.0.1", 0)
        assert exit_.value.exit_code == code
    assert served == [app]


def test_serve_on_a_fresh_database_reports_the_schedules_it_created(
    store_url: str, tmp_path: Path
) -> None:
    """A real ``tocsin serve --app`` on an empty database: one sync, whose log line counts the
    declared schedules as created (a second sync used to report them unchanged)."""
    tests = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": store_url,
        "PYTHONPATH": os.pathsep.join([str(tests), *sys.path]),
    }
    env.pop("TOCSIN_APP", None)
    log_path = tmp_path / "serve.log"
    port = free_port()
    args = [TOCSIN, "serve", "--port", str(port), "--app", "workflows.sample_app:WORKFLOWS"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(args, env=env, cwd=tests, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for("the server", lambda: "startup complete" in log_path.read_text(), timeout=30)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    synced = [line for line in lines if line["msg"] == "schedules synced"]
    assert len(synced) == 1, lines
    assert synced[0]["schedules_created"] == 2 and synced[0]["schedules_unchanged"] == 0
