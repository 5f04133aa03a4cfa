"""The graph memories (the memory port, :mod:`agents.ports.memory`) on SQLAlchemy Core: one store
(issue 44), in the ``memory_*`` tables (:mod:`controller.platform.store.schema`, revisions 0005 and
0006) wherever they are. Each row is under its memory's key, ``subject:<subject key>`` (never the
name) or ``run:<run id>``; a run's conversation log (``memory_log``) under the run's id.

- PostgreSQL (:class:`SqlMemoryStores`, runs on several nodes): the tables in the store's database,
  reached by a run's process with ``SBX_STATE_DSN`` (a role limited to them and the checkpoints),
  never with the store's own DSN.
- SQLite (:class:`SqliteMemoryStores`, the default): the same classes on one file per memory,
  so forgetting a subject deletes its file (the strongest erasure)::

    runs/memory/<subject key>.sqlite    a subject's memory (the key: a hash of the name, never the name)
    runs/<run id>/memory.sqlite          the memory of a run without a subject
    runs/<run id>/conversation.sqlite    the run's conversation log

  Each file holds the tables it needs, in WAL mode with a busy timeout, opened per call (NullPool:
  no handle is held, a file can be removed). A file an earlier release wrote (tables ``meta``,
  ``fields``, ``history``, ``conflicts``, ``commits``, ``conversations``; a log's ``entries``, or
  the release before's one table per kind) is adopted when opened: its rows copied under the
  memory's key and its tables dropped, in one transaction, so never twice.
- :meth:`SqliteMemoryStores.scratch`: the tables in RAM, gone with the store.

A write is applied whole, in one transaction, at most once per ``(run_id, turn)``, and two
conversations of one subject write in turn (each turn's ``previous`` is the value it replaced):
on PostgreSQL the transaction first takes an advisory lock on its memory's key; on SQLite it holds
the file's write lock from its first statement (``BEGIN IMMEDIATE``, waiting up to the busy timeout).
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import structlog
from sqlalchemy import Connection, Engine, Table, and_, bindparam, create_engine, func, inspect, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool
from sqlalchemy.sql.elements import BindParameter

from agents.ports.errors import EnvironmentFault, first_line
from agents.ports.memory import (
    Conflict,
    ConflictWrite,
    FieldChange,
    FieldMemory,
    FieldWrite,
    LogEntry,
    LogKind,
    MemoryView,
    MemoryWrite,
    NodeMemory,
    check_subject,
    subject_key,
)
from controller.platform.settings import Settings, state_dsn
from controller.platform.store.engine import WRITES, postgres_engine, sqlite_unpooled_engine
from controller.platform.store.schema import (
    memory_commits,
    memory_conflicts,
    memory_conversations,
    memory_fields,
    memory_history,
    memory_log,
    memory_subjects,
    metadata,
)

MEMORY_FOLDER = "memory"
RUN_MEMORY_FILE = "memory.sqlite"
CONVERSATION_FILE = "conversation.sqlite"
#: The tables of one graph memory (a file holds these, or ``memory_log`` alone).
GRAPH_TABLES = (memory_subjects, memory_fields, memory_history, memory_conflicts, memory_commits,
                memory_conversations)
#: The names of the memory tables: what a run's role needs (with the checkpoints') on PostgreSQL.
MEMORY_TABLES = tuple(t.name for t in (*GRAPH_TABLES, memory_log))
#: The columns :func:`_compose_view` reads, in its order.
_HISTORY_COLUMNS = ("node", "field", "value", "at", "source", "previous", "reasoning", "temporal", "applied",
                    "correction", "run_id", "turn")
_FIELD_COLUMNS = ("node", "field", "value", "skipped", "updated_at")
_CONFLICT_COLUMNS = ("id", "node", "field", "old", "new", "at", "run_id", "turn", "resolved", "resolution")

log = structlog.get_logger("sandloop.memory")


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _compose_view(subject: str, history_rows: Iterable[Sequence[Any]], field_rows: Iterable[Sequence[Any]],
                  conflict_rows: Iterable[Sequence[Any]], runs: Iterable[str], targets: Iterable[str]) -> MemoryView:
    """A :class:`MemoryView` of a memory's rows (_HISTORY_COLUMNS, _FIELD_COLUMNS, _CONFLICT_COLUMNS)."""
    history: dict[tuple[str, str], list[FieldChange]] = {}
    for r in history_rows:
        history.setdefault((r[0], r[1]), []).append(FieldChange(
            _load(r[2]), r[3], r[4], _load(r[5]), r[6], r[7], bool(r[8]), bool(r[9]), r[10], r[11]))
    current = {(r[0], r[1]): (_load(r[2]), bool(r[3]), r[4]) for r in field_rows}
    nodes: dict[str, list[FieldMemory]] = {}
    for key in sorted(set(history) | set(current)):
        value, skipped, updated = current.get(key, (None, False, ""))
        nodes.setdefault(key[0], []).append(FieldMemory(key[1], value, skipped, updated, tuple(history.get(key, ()))))
    conflicts = tuple(Conflict(r[0], r[1], r[2], _load(r[3]), _load(r[4]), r[5], r[6], r[7], bool(r[8]), r[9])
                      for r in conflict_rows)
    return MemoryView(subject, tuple(NodeMemory(n, tuple(f)) for n, f in nodes.items()), conflicts, tuple(runs),
                      tuple(targets))


_MINE: BindParameter[str] = bindparam("key")
#: What a view reads (built once: a statement's cache key is kept with it), in _compose_view's order.
_VIEW = (
    select(memory_subjects.c.name).where(memory_subjects.c.key == _MINE),
    select(*(memory_history.c[c] for c in _HISTORY_COLUMNS)).where(memory_history.c.key == _MINE)
    .order_by(memory_history.c.id),
    select(*(memory_fields.c[c] for c in _FIELD_COLUMNS)).where(memory_fields.c.key == _MINE),
    select(*(memory_conflicts.c[c] for c in _CONFLICT_COLUMNS)).where(memory_conflicts.c.key == _MINE)
    .order_by(memory_conflicts.c.id),
    select(memory_commits.c.run_id).where(memory_commits.c.key == _MINE).group_by(memory_commits.c.run_id)
    .order_by(func.min(memory_commits.c.at)),
    select(memory_conversations.c.target).where(memory_conversations.c.key == _MINE)
    .group_by(memory_conversations.c.target)
    .order_by(func.min(memory_conversations.c.at), memory_conversations.c.target),
)

_HELD = select(memory_fields.c.value).where(memory_fields.c.key == _MINE, memory_fields.c.node == bindparam("node"),
                                            memory_fields.c.field == bindparam("field"))
_HISTORY, _CONFLICT = memory_history.insert(), memory_conflicts.insert()


def _upserts(insert: Any) -> dict[str, Any]:
    """The INSERTs that keep the row there, or update it, in one dialect (built once)."""
    fields, log = insert(memory_fields), insert(memory_log)
    return {"subject": insert(memory_subjects).on_conflict_do_nothing(),
            "commit": insert(memory_commits).on_conflict_do_nothing().returning(memory_commits.c.turn),
            "conversation": insert(memory_conversations).on_conflict_do_nothing(),
            "field": fields.on_conflict_do_update(index_elements=["key", "node", "field"], set_={
                c: fields.excluded[c] for c in ("value", "skipped", "updated_at")}),
            "log": log.on_conflict_do_nothing(),
            "log again": log.on_conflict_do_update(index_elements=["run_id", "kind", "step", "name"],
                                                   set_={c: log.excluded[c] for c in ("data", "at")})}


_UPSERTS = {"postgresql": _upserts(postgresql.insert), "sqlite": _upserts(sqlite.insert)}


def _upsert(conn: Connection, which: str, **row: Any) -> Any:
    """Run upsert ``which`` of the connection's dialect on ``row``."""
    return conn.execute(_UPSERTS[conn.dialect.name][which], row)


class Place(Protocol):
    """Where a memory's rows are: an engine, or one SQLite memory's file on the files' engine."""

    def connect(self) -> Connection:
        """A connection there."""


@contextmanager
def _writing(place: Place) -> Iterator[Connection]:
    """A transaction that writes (SQLite: ``BEGIN IMMEDIATE``, the write lock from its first statement)."""
    with place.connect() as conn, conn.execution_options(**{WRITES: True}).begin():
        yield conn


class SqlGraphStore:
    """One graph memory (a subject's or a run's) in the database."""

    def __init__(self, engine: Place, key: str, subject: str = "", *, alone: bool = False) -> None:
        self.engine, self.key = engine, key
        self.alone = alone  # no one else writes it (scratch): a view stands until the next commit
        self.seen: MemoryView | None = None
        if subject:
            with _writing(engine) as conn:
                _upsert(conn, "subject", key=key, name=subject)

    def close(self) -> None:
        """Nothing to release: each call's connection goes back to its pool (SQLite: is closed)."""

    def view(self) -> MemoryView:
        """Every node with its fields and their histories, the conflicts, the runs that wrote (one read)."""
        if self.seen is not None:
            return self.seen
        with self.engine.connect() as conn:
            name, history, fields, conflicts, runs, targets = (conn.execute(q, {"key": self.key}) for q in _VIEW)
            view = _compose_view(name.scalar() or "", history, fields, conflicts, runs.scalars(), targets.scalars())
        self.seen = view if self.alone else None
        return view

    def commit(self, write: MemoryWrite) -> bool:
        """Apply ``write`` in one transaction, unless its turn was applied before (False then)."""
        self.seen = None
        with _writing(self.engine) as conn:
            if conn.dialect.name == "postgresql":  # one writer per memory at a time
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": zlib.crc32(self.key.encode())})
            first = _upsert(conn, "commit", key=self.key, run_id=write.run_id, turn=write.turn, at=write.at).first()
            if first is None:  # this turn was applied before
                return False
            self._apply(conn, write)
        return True

    def _apply(self, conn: Connection, write: MemoryWrite) -> None:
        if write.target:
            _upsert(conn, "conversation", key=self.key, run_id=write.run_id, target=write.target, at=write.at)
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
        where = {"key": self.key, "node": change.node, "field": change.field}
        held = conn.execute(_HELD, where).scalar()
        value = json.dumps(change.value)
        conn.execute(_HISTORY, {**where, "value": value, "previous": "null" if held is None else held,
                                "temporal": change.temporal, "source": change.source, "reasoning": change.reasoning,
                                "applied": int(change.applied), "correction": int(change.correction),
                                "run_id": write.run_id, "turn": write.turn, "at": write.at})
        if change.applied:
            _upsert(conn, "field", **where, value=value, skipped=int(change.skipped), updated_at=write.at)

    def _conflict(self, conn: Connection, write: MemoryWrite, conflict: ConflictWrite) -> None:
        conn.execute(_CONFLICT, {"key": self.key, "node": conflict.node, "field": conflict.field,
                                 "old": json.dumps(conflict.old), "new": json.dumps(conflict.new),
                                 "run_id": write.run_id, "turn": write.turn, "at": write.at,
                                 "resolved": int(conflict.resolved), "resolution": conflict.resolution})


class SqlConversationLog:
    """One run's conversation log in the database (``memory_log``)."""

    def __init__(self, engine: Place, run_id: str) -> None:
        self.engine, self.run_id = engine, run_id

    def put(self, kind: LogKind, step: int, data: str, at: str, *, name: str = "", replace: bool = False) -> None:
        """Keep an entry (once per key unless ``replace``)."""
        with _writing(self.engine) as conn:
            _upsert(conn, "log again" if replace else "log", run_id=self.run_id, kind=kind, step=step, name=name,
                    data=data, at=at)

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
        """Nothing to release: each call's connection goes back to its pool (SQLite: is closed)."""


class _Stores:
    """What both places do: a memory by its key, a log by its run, on the engine that holds them."""

    def _graph(self, key: str) -> Place:
        """Where memory ``key`` is."""
        raise NotImplementedError

    def _log(self, run_id: str) -> Place:
        """Where run ``run_id``'s conversation log is."""
        raise NotImplementedError

    def for_subject(self, subject: str) -> SqlGraphStore:
        """The memory of ``subject``.

        Raises:
            ConfigError: not a subject name (see :func:`agents.ports.memory.check_subject`).
        """
        name = check_subject(subject)
        key = f"subject:{subject_key(name)}"
        return SqlGraphStore(self._graph(key), key, name)

    def for_run(self, run_id: str) -> SqlGraphStore:
        """The memory of run ``run_id`` (a run id is the runner's own, checked where it is made)."""
        key = f"run:{run_id}"
        return SqlGraphStore(self._graph(key), key)

    def scratch(self) -> SqlGraphStore:
        """A memory that lives in RAM and is gone with the store (never in a file or the database)."""
        return SqlGraphStore(_File.in_ram(), "scratch", alone=True)

    def conversation(self, run_id: str) -> SqlConversationLog:
        """The conversation log of run ``run_id``."""
        return SqlConversationLog(self._log(run_id), run_id)


class SqlMemoryStores(_Stores):
    """The memory port's stores in the database: subjects' and runs' memories by key."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _graph(self, key: str) -> Place:
        return self.engine

    def _log(self, run_id: str) -> Place:
        return self.engine

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
            raise EnvironmentFault(f"cannot read the graph memories: {first_line(exc)}",
                                   hint="SBX_STATE_DSN names the store's database, upgraded (db upgrade), "
                                        "with the memory tables granted (docs/kubernetes.md)") from None

    def forget_subject(self, subject: str) -> bool:
        """Erase everything the memory holds about ``subject`` in one transaction; False if it held nothing."""
        key = f"subject:{subject_key(check_subject(subject))}"
        with _writing(self.engine) as conn:
            held = conn.execute(select(memory_subjects.c.key).where(memory_subjects.c.key == key)).first() is not None
            for table in GRAPH_TABLES:
                conn.execute(table.delete().where(table.c.key == key))
        return held

    def has_subject(self, subject: str) -> bool:
        """Whether ``subject`` has a memory (without creating one)."""
        key = f"subject:{subject_key(check_subject(subject))}"
        with self.engine.connect() as conn:
            return conn.execute(select(memory_subjects.c.key).where(memory_subjects.c.key == key)).first() is not None


#: An earlier release's tables in a file: each one's rows as the columns of the table they go to
#: (after its key column), copied once when the file is opened; then the old table is dropped.
_FORMER: dict[str, tuple[Table, str]] = {
    "meta": (memory_subjects, "(SELECT value AS name FROM meta WHERE key = 'subject')"),
    "fields": (memory_fields, "fields"),
    "history": (memory_history, "history"),
    "conflicts": (memory_conflicts, "conflicts"),
    "commits": (memory_commits, "commits"),
    "conversations": (memory_conversations, "conversations"),
    "entries": (memory_log, "entries"),
    # the release before kept a conversation in one table per kind
    "turns": (memory_log, "(SELECT 'turns' AS kind, turn AS step, '' AS name, json_object('question', "
                          "json(question), 'reply', reply, 'resolution', json(resolution)) AS data, at FROM turns)"),
    "decisions": (memory_log, "(SELECT 'decisions' AS kind, step, '' AS name, decision AS data, at FROM decisions)"),
    "edges": (memory_log, "(SELECT 'edges' AS kind, step, '' AS name, json_object('from', from_node, 'to', "
                          "to_node, 'reason', reason) AS data, at FROM edges)"),
    "traversal": (memory_log, "(SELECT 'traversal' AS kind, step, '' AS name, json_quote(node) AS data, at "
                              "FROM traversal)"),
    "snapshots": (memory_log, "(SELECT 'snapshots' AS kind, 0 AS step, node AS name, data, at FROM snapshots)"),
}


#: The database :meth:`_File.connect` opens (one engine serves every file: one statement cache).
_OPENING: ContextVar[str] = ContextVar("memory_file")


@lru_cache(maxsize=1)
def _files() -> Engine:
    """The engine of every SQLite memory: each call opens the file (URI) named by its place."""
    return sqlite_unpooled_engine(lambda: sqlite3.connect(_OPENING.get(), uri=True, timeout=30.0,
                                                          check_same_thread=False))


@lru_cache(maxsize=1)
def _empty_graph() -> sqlite3.Connection:
    """A graph memory's tables in RAM, made once: each scratch memory starts as a copy."""
    uri = f"file:/empty-graph-{uuid.uuid4().hex}?vfs=memdb"
    held = sqlite3.connect(uri, uri=True, check_same_thread=False)
    _File(uri, GRAPH_TABLES, "", held)
    return held


class _File:
    """One SQLite memory's (or log's) database, which holds ``tables``: made if missing, and an
    earlier release's tables adopted under ``key`` (in the same transaction, so once). A database in
    RAM (``vfs=memdb``) lives while ``held``, a connection to it, does."""

    def __init__(self, uri: str, tables: tuple[Table, ...], key: str, held: sqlite3.Connection | None = None) -> None:
        self.uri, self.held = uri, held
        if not tables:  # a copy of a database that has them
            return
        with _writing(self) as conn:
            found = set(inspect(conn).get_table_names())
            if not found.issuperset(t.name for t in tables):
                metadata.create_all(conn, tables=list(tables))
            for old, (table, rows) in _FORMER.items():
                if old in found and table in tables:
                    mine = "run_id" if table is memory_log else "key"
                    columns = ", ".join(c.name for c in table.columns if c.name != mine)
                    conn.execute(text(f"INSERT OR IGNORE INTO {table.name} ({mine}, {columns}) "  # noqa: S608
                                      f"SELECT :key, {columns} FROM {rows}"), {"key": key})  # (constants)
                    conn.exec_driver_sql(f"DROP TABLE {old}")

    @classmethod
    def on_disk(cls, path: Path, tables: tuple[Table, ...], key: str) -> _File:
        """The file ``path``: a new one is made in WAL mode, then linked into place (two connections
        switching one new file to WAL at once fail: "database is locked")."""
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fresh = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
            with closing(sqlite3.connect(fresh)) as db:
                db.execute("PRAGMA journal_mode=WAL")
            try:
                os.link(fresh, path)
            except FileExistsError:
                pass  # another connection made it first: use theirs
            except OSError:  # no hard links here (some network or FUSE file systems): made in place, as before
                log.info("memory.no_hard_links", folder=str(path.parent))
            finally:
                fresh.unlink()
        return cls(path.resolve().as_uri(), tables, key)

    @classmethod
    def in_ram(cls) -> _File:
        """A graph memory in RAM, gone with its place (a copy of an empty one)."""
        uri = f"file:/scratch-{uuid.uuid4().hex}?vfs=memdb"
        held = sqlite3.connect(uri, uri=True, check_same_thread=False)
        _empty_graph().backup(held)
        return cls(uri, (), "scratch", held)

    def connect(self) -> Connection:
        """A connection to this database (closed when released)."""
        opening = _OPENING.set(self.uri)
        try:
            return _files().connect()
        finally:
            _OPENING.reset(opening)


class SqliteMemoryStores(_Stores):
    """The memory port's stores in SQLite files: subjects under ``runs/memory/``, a run's memory and
    conversation log in its folder."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    def subject_path(self, subject: str) -> Path:
        """Where ``subject``'s memory is kept (its file is named by the subject's key, never its name)."""
        return self.runs_dir / MEMORY_FOLDER / f"{subject_key(subject)}.sqlite"

    def _graph(self, key: str) -> Place:
        kind, _, name = key.partition(":")
        path = self.runs_dir / MEMORY_FOLDER / f"{name}.sqlite" if kind == "subject" else \
            self.runs_dir / name / RUN_MEMORY_FILE
        return _File.on_disk(path, GRAPH_TABLES, key)

    def _log(self, run_id: str) -> Place:
        return _File.on_disk(self.runs_dir / run_id / CONVERSATION_FILE, (memory_log,), run_id)

    def has_subject(self, subject: str) -> bool:
        """Whether ``subject`` has a memory (without creating one)."""
        return self.subject_path(check_subject(subject)).is_file()

    def forget_subject(self, subject: str) -> bool:
        """Erase everything the memory holds about ``subject`` (its file, with SQLite's journal files);
        False if it had no memory."""
        path = self.subject_path(check_subject(subject))
        held = path.is_file()
        for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)
        return held

    def read_conversation(self, run_id: str, kind: LogKind, limit: int) -> list[LogEntry]:
        """The first ``limit`` entries of ``kind`` in run ``run_id``'s log, read-only, never changing the
        file (an earlier release's too; [] when it has none).

        Raises:
            SQLAlchemyError: the file cannot be read.
        """
        path = self.runs_dir / run_id / CONVERSATION_FILE
        if not path.is_file() or path.is_symlink():
            return []
        engine = create_engine("sqlite://", poolclass=NullPool, creator=lambda: sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5))
        try:
            with engine.connect() as conn:
                held = set(inspect(conn).get_table_names())
                rows = next((rows for table, rows in (("memory_log", "memory_log"), ("entries", "entries"),
                                                      (kind, _FORMER[kind][1])) if table in held), None)
                if rows is None:
                    return []
                found = conn.execute(text(f"SELECT step, name, data, at FROM {rows} WHERE kind = :kind "  # noqa: S608
                                          "ORDER BY step, name LIMIT :limit"), {"kind": kind, "limit": limit})
                return [LogEntry(int(step), str(name), str(data), str(at)) for step, name, data, at in found]
        finally:
            engine.dispose()


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
