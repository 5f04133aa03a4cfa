"""Bring a run store's schema to this release's, once, whoever else starts at the same moment.

``upgrade`` runs in one transaction that first takes a lock every other upgrader waits for (a
transaction-scoped advisory lock on PostgreSQL; SQLite's write lock, ``BEGIN IMMEDIATE``), so
two replicas starting together apply each migration once: the second finds the schema current.
Both databases have transactional DDL, so a migration that fails leaves the schema as it was.

A database made before migrations existed (release 1: ``runs`` and ``tokens``, no
``alembic_version``) is stamped at revision 0001 and upgraded from there. A database whose
revision this release does not know was made by a newer sandloop: refused in one line, never
changed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import structlog

# Alembic narrates each step (and, on import, its plugins) at INFO through the stdlib; the store
# says what changed in one event of its own.
logging.getLogger("alembic").setLevel(logging.WARNING)

from alembic import command  # noqa: E402
from alembic.config import Config  # noqa: E402
from alembic.runtime.migration import MigrationContext  # noqa: E402
from alembic.script import ScriptDirectory  # noqa: E402
from sqlalchemy import Connection, Engine, inspect, text  # noqa: E402

from controller.platform.store.engine import WRITES, translated  # noqa: E402
from controller.platform.store.models import StoreError  # noqa: E402

log = structlog.get_logger("sandloop.store")
MIGRATIONS = Path(__file__).with_name("migrations")
#: The revision of a database made before migrations existed.
BASELINE = "0001"
#: The advisory lock key migrations serialise on (PostgreSQL).
MIGRATE_LOCK = 21_000_034


class SchemaTooNew(StoreError):
    """The database was migrated by a newer sandloop than this one."""


def config() -> Config:
    """Alembic's configuration, from the package (no alembic.ini)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head() -> str:
    """The newest revision this release knows."""
    found = ScriptDirectory.from_config(config()).get_current_head()
    assert found is not None, "the store's migrations have no head"
    return found


def current(engine: Engine) -> str | None:
    """The database's revision (None: no migration ever ran on it)."""
    with translated("run store"), engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, *, label: str) -> str | None:
    """Migrate the database to :func:`head`; the revision it had before.

    Raises:
        SchemaTooNew: the database's revision is newer than this release knows.
        StoreError: the database cannot be read or a migration failed (nothing changed then).
    """
    with translated(label), engine.connect() as conn:
        conn = conn.execution_options(**{WRITES: True})
        with conn.begin():
            _lock(conn)
            before = _revision(conn)
            _refuse_unknown(before, label)
            cfg = config()
            cfg.attributes["connection"] = conn
            if before is None and inspect(conn).has_table("runs"):
                command.stamp(cfg, BASELINE)
            if before != head():
                command.upgrade(cfg, "head")
    if before is not None and before != head():  # a new database is created, not news
        log.info("store.migrated", store=label, before=before, after=head())
    return before


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATE_LOCK})"))


def _revision(conn: Connection) -> str | None:
    return MigrationContext.configure(conn).get_current_revision()


def _refuse_unknown(revision: str | None, label: str) -> None:
    if revision is None:
        return
    script = ScriptDirectory.from_config(config())
    if revision not in {r.revision for r in script.walk_revisions()}:
        raise SchemaTooNew(f"the {label}'s schema is at revision {revision}, newer than this sandloop knows "
                           f"(it knows up to {head()})",
                           hint="run a sandloop at least as new as the one that upgraded it")
