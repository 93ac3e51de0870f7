"""The facade: ``tocsin.Tocsin``, the one object users embed (DESIGN §4).

:class:`~tocsin.service.facade.Tocsin` is one class composed of small services. Its ``__init__``
builds a :class:`~tocsin.service.base.Core` (store, settings, the workflow registry; the edge
clock default and ids) and one service per concern; each service gets the core and, by
constructor injection, the services it calls (none reaches into another). A service is a thin
namespace over the engine: it checks what the caller passed, then calls ``engine``,
``workflows``, ``lanes`` or ``store`` functions in one transaction; deciding what fires is the
engine's (``engine.row_events`` for record writes, ``engine.tick`` for the table tick).

The methods DESIGN §4 documents are explicit one-line forwards on ``Tocsin``, each with its own
docstring; ``tick`` and ``work``, the passes that span services, are written out in the facade.
New capabilities are namespaces reached from the facade (``t.schedules``, ``t.lanes``,
``t.execution``), not more top-level forwards.

- :mod:`tocsin.service.base`: ``Core`` and ``Service`` (``store``, ``settings``, ``_now``,
  ``_new_id`` for the method bodies)
- :mod:`tocsin.service.facade`: ``Tocsin``: ``open``, ``close``, the forwards, ``tick``, ``work``
- :mod:`tocsin.service.data`: ``TablesService``: tables, records (their row events:
  ``engine.row_events``), pause/resume, the table half of the tick, preview, runs listing
- :mod:`tocsin.service.execution`: ``RunsService(records=TablesService, workflows=<starter>)``:
  executing table runs, retry, requeue, staged changes, messages, commands, outbound config
- :mod:`tocsin.service.workflows`: ``WorkflowService``: the registry, schedule sync and firing,
  workflow runs (start, cancel, resume, retry, their half of ``work``); ``schedules``:
  :class:`~tocsin.service.schedules.Schedules`
- :mod:`tocsin.service.lanes`: ``Lanes``: lanes and their run contracts (SPEC §14)
- :mod:`tocsin.service.triggers`: ``TriggerService``: the triggers config (whole or one trigger at
  a time), a scope's tables; ``TenantSaves``: its saves as a tenant route's token
- :mod:`tocsin.service.iac`: ``IacService(triggers=TriggerService)``: export, plan and apply
  trigger and schedule documents (SPEC §11)
- :mod:`tocsin.service.exposure`: which app code a tenant's trigger may reach (save and run time)
- :mod:`tocsin.service.whynot`: ``DiagnosticsService``: skips, next fires, the global dry run,
  run-now
- :mod:`tocsin.service.auth`: ``AuthService``: API tokens and per-scope roles
- :mod:`tocsin.service.secrets`: ``SecretsService``: per-scope webhook signing secrets
- :mod:`tocsin.service.health`: ``HealthService``: the readiness ping
"""

from __future__ import annotations

from tocsin.service.facade import Tocsin

__all__ = ["Tocsin"]
