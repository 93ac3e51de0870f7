"""Differential test: tocsin agrees with cronsim on shared syntax away from DST (UTC zone).

cronsim is a test oracle here (STYLE §7 F1), not a dependency: its DST behaviour differs from
SPEC §4.4 on purpose, so only UTC is compared. Expressions cronsim does not accept are skipped.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from itertools import islice

from cron_strategies import extended_expressions, seconds_expressions, strict_expressions
from cronsim import CronSim, CronSimError
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tocsin.core.time.cron import CronError, iter_after, parse

FIRES = 5
DEGENERATE_STEPPED_RANGE = re.compile(r"(?<!\d)(\d+)-\1/")


@settings(max_examples=250, deadline=None)
@given(
    strict_expressions() | extended_expressions() | seconds_expressions(),
    st.datetimes(datetime(1975, 1, 1), datetime(2090, 1, 1), timezones=st.just(UTC)),
)
def test_tocsin_agrees_with_cronsim_in_utc(expr: str, after: datetime) -> None:
    assume(len(expr.split()) <= 6)  # cronsim has no year field
    # cronsim 2.8 reads a one-value range with a step ("5-5/1") as "5/1" = 5-59: its quirk.
    assume(not DEGENERATE_STEPPED_RANGE.search(expr))
    try:
        spec = parse(expr, dialect="extended")
        oracle = CronSim(expr, after)
    except (CronError, CronSimError):
        assume(False)
        return
    try:
        expected = list(islice(oracle, FIRES))
    except StopIteration:  # cronsim gives up after 50 years
        assume(False)
        return
    assert list(islice(iter_after(spec, after), FIRES)) == expected, (expr, after)


def test_cronsim_agreement_examples() -> None:
    after = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
    for expr in ["0 9 15 * 5", "0 0 */2 * 1", "*/7 3-20/4 * * 1-5", "0 0 L * *", "0 0 * * 5L",
                 "0 0 * * 1#2", "0 0 1 JAN MON", "15 10 * * 7"]:  # fmt: skip
        spec = parse(expr, dialect="extended")
        expected = list(islice(CronSim(expr, after), FIRES))
        assert list(islice(iter_after(spec, after), FIRES)) == expected, expr
