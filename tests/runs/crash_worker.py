"""A worker process for the crash tests: ``python crash_worker.py <database url> <now iso>``
(test_drain_pg), or ``main`` as the target of a process forked by test_crash's fork server.

Opens the same database as the test and drains pending runs once (``Tocsin.work``) with outbound
HTTP allowed to 127.0.0.1. test_crash SIGKILLs it mid-run.
"""

from __future__ import annotations

import sys
from datetime import datetime

from tocsin.service import Tocsin
from tocsin.settings import Settings


def main(url: str, now_iso: str) -> int:
    settings = Settings(database_url=url, outbound_allow=("127.0.0.1",))
    tocsin = Tocsin.open(url, settings=settings)
    try:
        tocsin.work(now=datetime.fromisoformat(now_iso))
    finally:
        tocsin.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
