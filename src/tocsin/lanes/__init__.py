"""tocsin.lanes: windowed intake runs with a recorded run contract (SPEC §14).

- :mod:`~tocsin.lanes.definition`: ``Lane``, ``Candidate``, ``SourceUnavailable``
- :mod:`~tocsin.lanes.execute`: ask the source once, select, decide, record, then the handler
- :mod:`~tocsin.lanes.views`: the public shapes of lanes and attempts

The decisions themselves are pure and live in :mod:`tocsin.core.contract.lane`; a lane's schedule
is decided by :func:`tocsin.core.schedules.decide.decide`. Admission and scheduled runs are on the
one fire path: :mod:`tocsin.engine.lane_admit`, :mod:`tocsin.engine.lanes`.
"""

from __future__ import annotations

from tocsin.lanes.definition import Candidate, Lane, SourceContext, SourceUnavailable

__all__ = ["Candidate", "Lane", "SourceContext", "SourceUnavailable"]
