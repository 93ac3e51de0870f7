"""Issue 11: ``tocsin serve`` exits 1 when its background could not stop cleanly (a run may be
left ``running``), 0 otherwise; uvicorn itself is replaced by a stand-in that runs no server."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import typer

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
