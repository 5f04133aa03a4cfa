"""Graph memories in the database (issue 34): the memory port for runs on several nodes.

The same memories as :mod:`controller.platform.memory_store`'s files, in the store's ``memory_*``
tables (revision 0005), each row under its memory's key: ``subject:<subject key>`` (never the
name) or ``run:<run id>``. A run's process reaches them with ``SBX_STATE_DSN`` (a role limited to
these tables and the checkpoints), never with the store's own DSN.

A write is applied whole, in one transaction, at most once per ``(run_id, turn)``; the
transaction first takes an advisory lock on its memory's key, so two conversations of one
subject (on two replicas) write in turn and each turn's ``previous`` is the value it replaced.

A run's conversation log (turns, decisions, edges, traversal, snapshots) is in ``memory_log``
(revision 0006), under the run's id: a conversation taken over by another replica resumes with it.
"""

from __future__ import annotations

import json
import zlib
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from agents.ports.errors import EnvironmentFault
from agents.ports.memory import (
    ConflictWrite,
    FieldWrite,
    LogEntry,
    LogKind,
    MemoryView,
    MemoryWrite,
    check_subject,
    subject_key,
)
from controller.platform.memory_store import (
    CONFLICT_COLUMNS,
    FIELD_COLUMNS,
    HISTORY_COLUMNS,
    SqliteGraphStore,
    SqliteMemoryStores,
    compose_view,
)
from controller.platform.settings import Settings, state_dsn
from controller.platform.store.engine import postgres_engine, reason
from controller.platform.store.schema import (
    memory_commits,
    memory_conflicts,
    memory_conversations,
    memory_fields,
    memory_history,
    memory_log,
    memory_subjects,
)


def _insert(conn: Connection) -> Any:
    """The dialect's INSERT (for ON CONFLICT)."""
    return postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert


class SqlGraphStore:
    """One graph memory (a subject's or a run's) in the database."""

    def __init__(self, engine: Engine, key: str, subject: str = "") -> None:
        self.engine, self.key = engine, key
        if subject:
            with engine.begin() as conn:
                conn.execute(_insert(conn)(memory_subjects).values(key=key, name=subject).on_conflict_do_nothing())

    def close(self) -> None:
        """Nothing to release: the engine's connections go back to its pool after each call."""

    def view(self) -> MemoryView:
        """Every node with its fields and their histories, the conflicts, the runs that wrote (one read)."""
        mine = self.key
        with self.engine.connect() as conn:
            name = conn.execute(select(memory_subjects.c.name).where(memory_subjects.c.key == mine)).scalar()
            return compose_view(
                name or "",
                conn.execute(select(*(memory_history.c[c] for c in HISTORY_COLUMNS))
                             .where(memory_history.c.key == mine).order_by(memory_history.c.id)),
                conn.execute(select(*(memory_fields.c[c] for c in FIELD_COLUMNS)).where(memory_fields.c.key == mine)),
                conn.execute(select(*(memory_conflicts.c[c] for c in CONFLICT_COLUMNS))
                             .where(memory_conflicts.c.key == mine).order_by(memory_conflicts.c.id)),
                conn.execute(select(memory_commits.c.run_id).where(memory_commits.c.key == mine)
                             .group_by(memory_commits.c.run_id).order_by(func.min(memory_commits.c.at))).scalars(),
                conn.execute(select(memory_conversations.c.target).where(memory_conversations.c.key == mine)
                             .group_by(memory_conversations.c.target)
                             .order_by(func.min(memory_conversations.c.at), memory_conversations.c.target)).scalars())

    def commit(self, write: MemoryWrite) -> bool:
        """Apply ``write`` in one transaction, unless its turn was applied before (False then)."""
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # one writer per memory at a time
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": zlib.crc32(self.key.encode())})
            first = conn.execute(_insert(conn)(memory_commits).values(key=self.key, run_id=write.run_id,
                                                                       turn=write.turn, at=write.at)
                                 .on_conflict_do_nothing().returning(memory_commits.c.turn)).first()
            if first is None:  # this turn was applied before
                return False
            self._apply(conn, write)
        return True

    def _apply(self, conn: Connection, write: MemoryWrite) -> None:
        if write.target:
            conn.execute(_insert(conn)(memory_conversations).values(key=self.key, run_id=write.run_id,
                                                                    target=write.target, at=write.at)
                         .on_conflict_do_nothing())
        for change in write.fields:
            self._field(conn, write, change)
        for conflict in write.conflicts:
            self._conflict(conn, write, conflict)
        open_ones = and_(memory_conflicts.c.key == self.key, memory_conflicts.c.resolved == 0)
        for conflict_id, resolution in write.close:
            conn.execute(update(memory_conflicts).where(open_ones, memory_conflicts.c.id == conflict_id)
                         .values(resolved=1, resolution=f"{resolution} ({write.at})"))
        for node, field, resolution in write.close_fields:
            conn.execute(update(memory_conflicts).where(open_ones, memory_conflicts.c.node == node,
                                                        memory_conflicts.c.field == field)
                         .values(resolved=1, resolution=f"{resolution} ({write.at})"))

    def _field(self, conn: Connection, write: MemoryWrite, change: FieldWrite) -> None:
        held = conn.execute(select(memory_fields.c.value).where(
            memory_fields.c.key == self.key, memory_fields.c.node == change.node,
            memory_fields.c.field == change.field)).scalar()
        value = json.dumps(change.value)
        conn.execute(memory_history.insert().values(
            key=self.key, node=change.node, field=change.field, value=value,
            previous="null" if held is None else held, temporal=change.temporal, source=change.source,
            reasoning=change.reasoning, applied=int(change.applied), correction=int(change.correction),
            run_id=write.run_id, turn=write.turn, at=write.at))
        if change.applied:
            row = {"value": value, "skipped": int(change.skipped), "updated_at": write.at}
            conn.execute(_insert(conn)(memory_fields).values(key=self.key, node=change.node, field=change.field, **row)
                         .on_conflict_do_update(index_elements=["key", "node", "field"], set_=row))

    def _conflict(self, conn: Connection, write: MemoryWrite, conflict: ConflictWrite) -> None:
        conn.execute(memory_conflicts.insert().values(
            key=self.key, node=conflict.node, field=conflict.field, old=json.dumps(conflict.old),
            new=json.dumps(conflict.new), run_id=write.run_id, turn=write.turn, at=write.at,
            resolved=int(conflict.resolved), resolution=conflict.resolution))


class SqlConversationLog:
    """One run's conversation log in the database (``memory_log``)."""

    def __init__(self, engine: Engine, run_id: str) -> None:
        self.engine, self.run_id = engine, run_id

    def put(self, kind: LogKind, step: int, data: str, at: str, *, name: str = "", replace: bool = False) -> None:
        """Keep an entry (once per key unless ``replace``)."""
        with self.engine.begin() as conn:
            insert = _insert(conn)(memory_log).values(run_id=self.run_id, kind=kind, step=step, name=name,
                                                      data=data, at=at)
            conn.execute(insert.on_conflict_do_update(index_elements=["run_id", "kind", "step", "name"],
                                                      set_={"data": data, "at": at})
                         if replace else insert.on_conflict_do_nothing())

    def get(self, kind: LogKind, step: int, name: str = "") -> str | None:
        """The data kept under a key, or None."""
        with self.engine.connect() as conn:
            found = conn.execute(select(memory_log.c.data).where(
                memory_log.c.run_id == self.run_id, memory_log.c.kind == kind, memory_log.c.step == step,
                memory_log.c.name == name)).scalar()
        return None if found is None else str(found)

    def entries(self, kind: LogKind, limit: int | None = None) -> list[LogEntry]:
        """Every entry of ``kind`` (the first ``limit``), by step then name."""
        query = (select(memory_log.c.step, memory_log.c.name, memory_log.c.data, memory_log.c.at)
                 .where(memory_log.c.run_id == self.run_id, memory_log.c.kind == kind)
                 .order_by(memory_log.c.step, memory_log.c.name).limit(limit))
        with self.engine.connect() as conn:
            return [LogEntry(int(step), str(name), str(data), str(at)) for step, name, data, at in conn.execute(query)]

    def close(self) -> None:
        """Nothing to release: the engine's connections go back to its pool after each call."""


class SqlMemoryStores:
    """The memory port's stores in the database: subjects' and runs' memories by key."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def for_subject(self, subject: str) -> SqlGraphStore:
        """The memory of ``subject``.

        Raises:
            ConfigError: not a subject name (see :func:`agents.ports.memory.check_subject`).
        """
        name = check_subject(subject)
        return SqlGraphStore(self.engine, f"subject:{subject_key(name)}", name)

    def for_run(self, run_id: str) -> SqlGraphStore:
        """The memory of run ``run_id``."""
        return SqlGraphStore(self.engine, f"run:{run_id}")

    def scratch(self) -> SqliteGraphStore:
        """A memory that lives in RAM and is gone once closed (never in the database)."""
        return SqliteGraphStore(":memory:")

    def conversation(self, run_id: str) -> SqlConversationLog:
        """The conversation log of run ``run_id``."""
        return SqlConversationLog(self.engine, run_id)

    def read_conversation(self, run_id: str, kind: LogKind, limit: int) -> list[LogEntry]:
        """The first ``limit`` entries of ``kind`` in run ``run_id``'s log.

        Raises:
            SQLAlchemyError: the database cannot be read.
        """
        return SqlConversationLog(self.engine, run_id).entries(kind, limit)

    def check(self) -> None:
        """Raise unless the memory tables can be read (the store's database, revisions 0005 and 0006, granted).

        Raises:
            EnvironmentFault: they cannot (one line, never the DSN).
        """
        try:
            with self.engine.connect() as conn:
                conn.execute(select(memory_subjects.c.key).limit(1)).first()
        except SQLAlchemyError as exc:
            raise EnvironmentFault(f"cannot read the graph memories: {reason(exc)}",
                                   hint="SBX_STATE_DSN names the store's database, upgraded (db upgrade), "
                                        "with the memory tables granted (docs/kubernetes.md)") from None

    def forget_subject(self, subject: str) -> bool:
        """Erase everything the memory holds about ``subject`` in one transaction; False if it held nothing."""
        key = f"subject:{subject_key(check_subject(subject))}"
        with self.engine.begin() as conn:
            held = conn.execute(select(memory_subjects.c.key).where(memory_subjects.c.key == key)).first() is not None
            for table in (memory_fields, memory_history, memory_conflicts, memory_commits, memory_conversations,
                          memory_subjects):
                conn.execute(table.delete().where(table.c.key == key))
        return held

    def has_subject(self, subject: str) -> bool:
        """Whether ``subject`` has a memory (without creating one)."""
        key = f"subject:{subject_key(check_subject(subject))}"
        with self.engine.connect() as conn:
            return conn.execute(select(memory_subjects.c.key).where(memory_subjects.c.key == key)).first() is not None


#: The names of the memory tables: what a run's role needs (with the checkpoints') on PostgreSQL.
MEMORY_TABLES = tuple(t.name for t in (memory_subjects, memory_fields, memory_history, memory_conflicts,
                                       memory_commits, memory_conversations, memory_log))
#: Either place the memory port's stores are.
MemoryBackend = SqliteMemoryStores | SqlMemoryStores


def memory_stores(settings: Settings) -> MemoryBackend:
    """The stores of every graph memory these settings' runs write: the database at SBX_STATE_DSN,
    else the SQLite files under the runs folder."""
    dsn = state_dsn(settings)
    return SqlMemoryStores(_engine(dsn)) if dsn is not None else SqliteMemoryStores(settings.runs_dir)


@lru_cache(maxsize=4)
def _engine(dsn: str) -> Engine:
    """One engine (and pool) per database for the process's life."""
    return postgres_engine(dsn, timeout=10.0)
