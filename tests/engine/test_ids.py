"""Time-ordered entity ids (UUIDv7, RFC 9562) for tables, records and runs."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

from tocsin.engine.ids import uuid7, uuid7s

AT = datetime(2026, 8, 27, 5, 2, 13, 456_000, tzinfo=UTC)


def _ms(text: str) -> int:
    return int(text.replace("-", "")[:12], 16)


def test_ids_are_version_7_uuids_carrying_the_instant_in_milliseconds() -> None:
    for text in [uuid7(AT), *uuid7s(AT + timedelta(days=400), 3)]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert _ms(uuid7(AT)) == int(AT.timestamp() * 1000)


def test_ids_increase_with_the_instant_and_within_one_millisecond() -> None:
    later = [uuid7(AT + timedelta(milliseconds=k)) for k in range(50)]
    assert later == sorted(later)
    same = uuid7s(AT, 500) + [uuid7(AT) for _ in range(500)]
    assert same == sorted(same) and len(set(same)) == 1000
    assert {_ms(i) for i in same} == {int(AT.timestamp() * 1000)}


def test_ids_made_by_racing_threads_are_distinct() -> None:
    made: list[list[str]] = []

    def work() -> None:
        made.append([i for _ in range(200) for i in uuid7s(AT, 5)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [i for batch in made for i in batch]
    assert len(everything) == 4000 == len(set(everything))


def test_an_instant_before_the_epoch_still_gives_a_valid_id() -> None:
    early = datetime(1900, 1, 1, tzinfo=UTC)
    assert _ms(uuid7(early)) == 0 and uuid.UUID(uuid7(early)).version == 7


def test_the_text_is_the_uuid_of_the_128_bit_value_across_the_counter_s_top_bits() -> None:
    from tocsin.engine.ids import _texts

    def reference(ms: int, counter: int) -> str:
        value = (ms << 80) | (0x7 << 76) | (0b10 << 62)
        value |= ((counter >> 62) << 64) | (counter & 0x3FFF_FFFF_FFFF_FFFF)
        return str(uuid.UUID(int=value))

    ms = int(AT.timestamp() * 1000)
    for start in (0, (1 << 62) - 3, (5 << 62) + 17, (1 << 74) - 4):
        assert _texts(ms, start, start + 4) == [reference(ms, c) for c in range(start, start + 4)]
