"""Alembic's environment: always run from :func:`controller.platform.store.migrate.upgrade`, which
passes the connection (inside its locked transaction) as ``config.attributes["connection"]``."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
