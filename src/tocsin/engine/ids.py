"""Time-ordered entity ids: UUIDv7 (RFC 9562), made from a given instant.

Tables, records and runs get ids whose first 48 bits are the Unix milliseconds of the instant
they were made at, so rows made together sit together in every B-tree keyed or ordered by id
(the primary keys; the tick's rotation walks tables by ``(last_ticked_at, id)``). Random UUIDv4
keys scatter each batch of writes over the whole index: on the tick benchmark (a) on SQLite they
cost about a fifth of the drain (4.0 s against 3.2 s, ``bench/tick_bench.py``).

Within one millisecond the ids of a process increase (RFC 9562 §6.2 method 2: the 74 random
bits are incremented from a random start), so ids made at the same ``at`` (a tick's runs,
records inserted together, tests with a fixed ``now``) are ordered too. The text is a standard
36-character UUID.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime

_RANDOM_BITS = 74  # 12 of rand_a + 62 of rand_b
_START_MASK = (1 << (_RANDOM_BITS - 1)) - 1  # a fresh start leaves half the space to count up
_LOCK = threading.Lock()
_last = {"ms": -1, "counter": 0}


def uuid7s(at: datetime, count: int) -> list[str]:
    """``count`` increasing UUIDv7s for the instant ``at`` (aware)."""
    ms = max(0, int(at.timestamp() * 1000)) & 0xFFFF_FFFF_FFFF
    with _LOCK:
        if ms == _last["ms"]:
            start = _last["counter"] + 1
        else:
            start = int.from_bytes(os.urandom(10)) & _START_MASK
        end = start + count
        if end >> _RANDOM_BITS:  # the millisecond's space is used up: start afresh
            start, end = 0, count
        _last["ms"], _last["counter"] = ms, end - 1
    return _texts(ms, start, end)


_LOW62 = 0x3FFF_FFFF_FFFF_FFFF
_VARIANT = 0b10 << 62


def _texts(ms: int, start: int, end: int) -> list[str]:
    """The ids of counters ``start .. end - 1`` in millisecond ``ms``. The first 64 bits (the
    instant, the version, the counter's top 12 bits) are formatted once per run of counters
    sharing them, the last 64 (variant and the counter's low 62 bits) per id."""
    out = []
    top = -1
    prefix = ""
    for counter in range(start, end):
        if counter >> 62 != top:
            top = counter >> 62
            h = f"{(ms << 16) | (0x7 << 12) | top:016x}"
            prefix = f"{h[:8]}-{h[8:12]}-{h[12:]}-"
        low = f"{_VARIANT | (counter & _LOW62):016x}"
        out.append(f"{prefix}{low[:4]}-{low[4:]}")
    return out


def uuid7(at: datetime) -> str:
    """One UUIDv7 for the instant ``at`` (see :func:`uuid7s`)."""
    return uuid7s(at, 1)[0]


__all__ = ["uuid7", "uuid7s"]
