"""A SQLite database filled up to its cap, and freed again: the operator's side of a full disk.

``TOCSIN_SQLITE_MAX_BYTES`` (``Settings.sqlite_max_bytes``) caps every connection tocsin opens
(``PRAGMA max_page_count``); :class:`Filler` opens a connection of its own with the same cap,
grows a table of its own until SQLite answers SQLITE_FULL (64 KiB values, then smaller ones, so
no page of it has room left), and ``free()`` deletes it: its pages go back to the file's
freelist and tocsin's writes find room again, as they would after an operator freed disk space.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

CAP_BYTES = 8 * 1024 * 1024  # far above the migrated database (~1 MiB): only the filler fills it
FULL = 13  # SQLITE_FULL


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


class Filler:
    def __init__(self, url: str, cap_bytes: int = CAP_BYTES) -> None:
        self.conn = sqlite3.connect(sqlite_path(url), isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 5000")
        page_size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {cap_bytes // page_size}")
        self.conn.execute("CREATE TABLE IF NOT EXISTS test_filler (filler BLOB)")

    def fill(self) -> None:
        """Grow the filler until the database cannot grow."""
        for size in (64 * 1024, 4096, 256, 16):
            try:
                while True:
                    self.conn.execute("INSERT INTO test_filler VALUES (zeroblob(?))", (size,))
            except sqlite3.OperationalError as exc:
                assert exc.sqlite_errorcode == FULL, exc

    def free(self) -> None:
        """Delete the filler: its pages are free for any write again."""
        self.conn.execute("DELETE FROM test_filler")

    def close(self) -> None:
        self.conn.close()
