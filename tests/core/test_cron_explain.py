"""``explain``: cron expressions in plain English (Studio's "cron in words", SPEC §16)."""

from __future__ import annotations

import pytest

from tocsin.core.time.cron import explain, parse

CASES = [
    ("0 9 * * 1-5", "strict", "At 09:00 on Monday through Friday"),
    ("*/15 * * * *", "strict", "Every 15 minutes"),
    ("* * * * *", "strict", "Every minute"),
    ("0 * * * *", "strict", "Every hour"),
    ("15 * * * *", "strict", "At minute 15 past every hour"),
    ("0 0 * * *", "strict", "At 00:00 every day"),
    ("0 9,17 * * *", "strict", "At 09:00 and 17:00 every day"),
    ("5,35 */2 * * *", "strict", "At minutes 5 and 35 past every 2nd hour"),
    ("*/5 9-17 * * 1-5", "strict",
     "Every 5 minutes during hours 9 through 17 on Monday through Friday"),
    ("0 9 15 * 5", "strict", "At 09:00 on day 15 of the month or on Friday"),
    ("0 0 */2 * 1", "strict", "At 00:00 on every 2nd day of the month if it is also a Monday"),
    ("0 0 1,15 * *", "strict", "At 00:00 on days 1 and 15 of the month"),
    ("0 0 1 1 *", "strict", "At 00:00 on day 1 of the month in January"),
    ("0 12 * */3 *", "strict", "At 12:00 every day in every 3rd month"),
    ("0 0 L * *", "extended", "At 00:00 on the last day of the month"),
    ("0 0 * * 5L", "extended", "At 00:00 on the last Friday of the month"),
    ("0 10 * * 1#2", "extended", "At 10:00 on the second Monday of the month"),
    ("0 0 * * L", "extended", "At 00:00 on Saturday"),
    ("0 0 ? * 7", "extended", "At 00:00 on Sunday"),
    ("25/10 * * * *", "extended", "At every 10th minute from 25 through 59 past every hour"),
    ("0 9 * JAN-MAR MON-FRI", "extended",
     "At 09:00 on Monday through Friday in January through March"),
    ("*/10 * * * * *", "extended", "Every 10 seconds"),
    ("30 30 2 * * *", "extended", "At 02:30:30 every day"),
    ("0 0 12 1 1 ? 2030", "extended", "At 12:00 on day 1 of the month in January in 2030"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "dialect", "words"), CASES)
def test_explain(expr: str, dialect: str, words: str) -> None:
    assert explain(parse(expr, dialect=dialect)) == words  # type: ignore[arg-type]
