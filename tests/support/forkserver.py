"""Worker processes for the race and crash tests, without a fresh interpreter each.

``FORKSERVER`` is the multiprocessing "forkserver" context: a server process imports tocsin once,
and every ``FORKSERVER.Process`` is forked from it. Each is still a separate OS process with its
own database connections, killed and reaped like any other, but it starts in milliseconds instead
of paying ~1 s of interpreter start and imports (8 ticker processes per race test, 20 crash
rounds per backend). One server per pytest process, started by the first test that needs one;
the preload list is here so every test gets the same. ``tocsin serve``
(``support.processes.serving``) runs the ``tocsin`` program's own ``main`` in such a process,
with its environment, working directory and output set first as ``subprocess`` would set them.

Python 3.11's fork server does not apply the parent's ``sys.path`` before preloading (the tests
directory is missing there), so only installed modules are preloaded; the child imports the
test's own module (with the parent's ``sys.path``) when it unpickles its target.
"""

from __future__ import annotations

import multiprocessing

FORKSERVER = multiprocessing.get_context("forkserver")
FORKSERVER.set_forkserver_preload(
    [
        "tocsin.service",
        "tocsin.cli",  # ``tocsin serve`` (support.processes.serving): the CLI, the app, uvicorn
        "tocsin.api.app",
        "uvicorn",
        "sqlalchemy.dialects.sqlite",
        "psycopg",
        "pytest",
    ]
)
