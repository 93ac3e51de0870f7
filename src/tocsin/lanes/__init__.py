"""tocsin.lanes: windowed intake runs with a recorded run contract (SPEC §14).

- :mod:`~tocsin.lanes.definition`: ``Lane``, ``Candidate``, ``SourceUnavailable``
- :mod:`~tocsin.lanes.admit`: the overlap and duplicate checks, attempt numbers (before the source)
- :mod:`~tocsin.lanes.execute`: ask the source once, select, decide, record, then the handler
- :mod:`~tocsin.lanes.firing`: scheduled runs through the tick and the occurrence ledger
- :mod:`~tocsin.lanes.views`: the public shapes of lanes and attempts

The decisions themselves are pure and live in :mod:`tocsin.core.contract.lane`.
"""

from __future__ import annotations

from tocsin.lanes.definition import Candidate, Lane, SourceContext, SourceUnavailable

__all__ = ["Candidate", "Lane", "SourceContext", "SourceUnavailable"]
