"""What many tests need, written once: import ``support.<noun>`` (``tests/`` is on ``sys.path``).

- ``support.net``: a free local port.
- ``support.waiting``: ``wait_for`` — poll until something holds, or fail saying what.
- ``support.processes``: the ``tocsin`` executable, its environment, ``tocsin serve`` as a real
  process (``serving``), stopping a process, creating a token through the CLI.
- ``support.cli``: the Typer runner and ``invoke`` for in-process CLI tests.
"""
