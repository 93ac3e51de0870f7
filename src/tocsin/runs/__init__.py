"""tocsin.runs: executing runs (SPEC §8, §9).

- :mod:`tocsin.runs.worker`: claim → actions → per-action receipts → finish; the worker loop.
- :mod:`tocsin.runs.definition`: which trigger definition a run executes (§9.3).
- :mod:`tocsin.runs.retry`: in-place retry of lock conflicts (§9.5) and the moderator retry (§9.4).
- :mod:`tocsin.runs.approvals`: staged changes of the approval gate (§9.6).
"""

from __future__ import annotations
