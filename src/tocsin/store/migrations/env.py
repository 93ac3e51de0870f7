"""Alembic environment: always online, on the connection handed over by ``tocsin.store.migrate``.

``upgrade_to_head`` opens the transaction (and takes the migration lock) before Alembic runs, so
``begin_transaction`` here joins that external transaction instead of committing on its own.
"""

from __future__ import annotations

from alembic import context

from tocsin import messages
from tocsin.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(messages.MIGRATIONS_OUTSIDE_TOCSIN)

context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
