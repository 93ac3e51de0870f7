"""tocsin.engine: orchestration of core decisions and store writes, always given ``now``.

- :mod:`~tocsin.engine.evaluate`: THE evaluator (``classify``), shared by tick and preview
- :mod:`~tocsin.engine.tick`: ``tick`` (SPEC §6): the sweeps, then the passes, the tables' first
- :mod:`~tocsin.engine.passes`: the tick's one paging loop over every kind's pages
- :mod:`~tocsin.engine.preview`: ``schedule_preview``, read-only (SPEC §7)
- :mod:`~tocsin.engine.row_events`: what a record write fires (SPEC §3, §13)
- :mod:`~tocsin.engine.configs`: ``triggers.set`` and trigger state upkeep (SPEC §3–§5.2)
- :mod:`~tocsin.engine.lanes`: the tick's lane pass, its dry run and next fires (SPEC §14)
- :mod:`~tocsin.engine.lane_admit`: a lane run's admission (SPEC §14 steps 1–2)
- :mod:`~tocsin.engine.sweeps`: the tick's recovery sweeps (SPEC §6, §9)
- :mod:`~tocsin.engine.schedules`: ``fire_due_schedules``, the workflow cron schedules' pass
  (SPEC §12)
- :mod:`~tocsin.engine.trees`: ``fire_trigger_schedules``, the compound-trigger schedules' pass
  (SPEC §13)
- :mod:`~tocsin.engine.backfill`: a workflow schedule's backfill (the decision caught up in full;
  its own ledger namespace)
- :mod:`~tocsin.engine.runnow`: a table trigger's run-now (the decision on a manual event)
- :mod:`~tocsin.engine.schedule_rows`: a schedule row as the values of the one decision
- :mod:`~tocsin.engine.schedule_whynot`: workflow schedules' next fires and dry-run entries
- :mod:`~tocsin.engine.ticker`: the embedded loop, the one reader of the clock here (SPEC §16)
"""

from __future__ import annotations
