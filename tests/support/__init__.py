"""What many tests need, written once: import ``support.<noun>`` (``tests/`` is on ``sys.path``).

- ``support.net``: a free local port.
- ``support.waiting``: ``wait_for`` — poll until something holds, or fail saying what.
- ``support.processes``: the ``tocsin`` executable, its environment, ``tocsin serve`` as a real
  process (``serving``), stopping a process, creating a token through the CLI.
- ``support.fixtures``: the ``env``, ``serve_app`` and ``served`` fixtures
  (``tests/e2e/conftest.py`` imports them).
- ``support.cli``: the Typer runner and ``invoke`` for in-process CLI tests.
- ``support.outage``: a database outage as a loop sees it (the real driver error, a stop event
  that records its pauses, a PostgreSQL proxy that can be cut).
- ``support.forkserver``: ``FORKSERVER``, worker processes forked from one preloaded server.
- ``support.storage``: a SQLite database filled to its cap (``Filler``), and freed again.
- ``support.settings``: ``@with_settings(field=value)``, a test's ``settings``/``tocsin`` fixtures
  with those fields (no test patches a private constant: a knob is a setting).
"""
