"""Infrastructure as code for table triggers and workflow schedules: export, plan, apply (§11).

- :mod:`tocsin.iac.documents`: the JSON Lines document format (parse, group, canonical dump)
- :mod:`tocsin.iac.differ`: authored documents against stored configs → per-trigger plan
- :mod:`tocsin.iac.scope`: table names within a scope, and the export
- :mod:`tocsin.iac.schedules`: schedule documents (imperative workflow schedules, cron or a
  compound trigger tree): their normal form, canonical order and per-workflow plan

The facade (``Tocsin.export`` / ``plan`` / ``apply``) reads the store and writes through
``set_triggers``; everything here is pure.
"""

from __future__ import annotations

from tocsin.iac.differ import Entry, TableDocumentPlan, diff, mark_refused, plan_table
from tocsin.iac.documents import TableDocuments, canonical, dumps, group, loads
from tocsin.iac.scope import export_documents, resolve, stored_config

__all__ = [
    "Entry",
    "TableDocumentPlan",
    "TableDocuments",
    "canonical",
    "diff",
    "dumps",
    "export_documents",
    "group",
    "loads",
    "mark_refused",
    "plan_table",
    "resolve",
    "stored_config",
]
