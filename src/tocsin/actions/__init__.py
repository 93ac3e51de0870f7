"""tocsin.actions: the nine action types of SPEC §10, one module each behind
:class:`tocsin.actions.base.Action`; :mod:`tocsin.actions.registry` maps a type to its handler and
:mod:`tocsin.actions.net` guards outbound HTTP."""

from __future__ import annotations
