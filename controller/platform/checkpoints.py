"""Checkpoints of a run's graph: LangGraph's own SQLite checkpointer, under the run folder, or
its PostgreSQL checkpointer when ``SBX_STATE_DSN`` is set (issue 34: replicas on any node).

Every run writes ``runs/<run_id>/checkpoints.sqlite`` (thread id = run id) with
``durability="sync"``: a node's update is on disk before the next node starts, so a run
killed at any point (Ctrl-C, SIGKILL, a lost Pod or machine) resumes from its last
completed node with ``controller run --resume RUN_ID``.

Deserialising a checkpoint may construct objects, so it is strict, as the checkpointer's
README advises (``LANGGRAPH_STRICT_MSGPACK``): the serializer is given an explicit
allowlist, built from the agent's state schema (every dataclass and enum reachable from
its type hints) plus the agent's named restorers; anything else in a checkpoint file is
left as raw data, never imported or called. Pickle is never used. The PostgreSQL checkpointer
is given the same serializer, so the same allowlist holds wherever the checkpoint is.

On PostgreSQL (``PostgresSaver``, tables ``checkpoints``, ``checkpoint_blobs``,
``checkpoint_writes``, ``checkpoint_migrations``) every replica resumes any run: the thread id
is the run id. ``SBX_STATE_DSN`` is meant to name a role that may use only those tables
(docs/kubernetes.md), as it is in every run's process; the service's store DSN never is.

A state value may say how it is stored by defining ``__checkpoint__()``, returning
``(restorer, kwargs)``: the bank-parser agent's execution keeps the sandbox's raw JSON
result and drops the decoded DataFrame, which its restorer decodes again with the same
untrusted-input decoder.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sqlite3
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import ormsgpack
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    JsonPlusSerializer,
    _msgpack_default,
    _option,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from agents.ports.errors import EnvironmentFault, first_line
from controller.platform.fence import FencedSaver, read_fence

CHECKPOINT_FILE = "checkpoints.sqlite"


@dataclass(frozen=True)
class Checkpoint:
    """Where a run's graph checkpoints, and whether this process resumes it."""

    saver: SqliteSaver | PostgresSaver | FencedSaver
    thread_id: str
    resume: bool = False

    @property
    def config(self) -> dict[str, Any]:
        """The ``configurable`` part of a graph config naming this run's thread."""
        return {"configurable": {"thread_id": self.thread_id}}


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's msgpack serializer with an explicit allowlist and ``__checkpoint__`` support."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Encode like JsonPlusSerializer, letting values with ``__checkpoint__`` choose their form."""
        if obj is None or isinstance(obj, bytes | bytearray):
            return super().dumps_typed(obj)
        return "msgpack", _encode(obj)


def _encode(obj: Any) -> bytes:
    return ormsgpack.packb(obj, default=_default, option=_option)


def _default(obj: Any) -> Any:
    """Our values first (so nested ones are encoded by us too), then LangGraph's default."""
    hook = getattr(obj, "__checkpoint__", None)
    if callable(hook):
        restorer, kwargs = hook()
        return ormsgpack.Ext(EXT_CONSTRUCTOR_KW_ARGS, _encode((restorer.__module__, restorer.__qualname__, kwargs)))
    if isinstance(obj, Fraction):  # exact rates (the Idris analysis): not in LangGraph's encoder
        return ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, _encode(("fractions", "Fraction", (obj.numerator,
                                                                                          obj.denominator))))
    if isinstance(obj, _Tuple):
        return ormsgpack.Ext(EXT_CONSTRUCTOR_SINGLE_ARG, _encode(("builtins", "tuple", list(obj.items))))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: _keep_tuple(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return ormsgpack.Ext(EXT_CONSTRUCTOR_KW_ARGS, _encode((type(obj).__module__, type(obj).__name__, fields)))
    return _msgpack_default(obj)


@dataclass(frozen=True)
class _Tuple:
    """A tuple field of a dataclass: msgpack would turn it into a list; this brings it back as a tuple."""

    items: tuple[Any, ...]


def _keep_tuple(value: Any) -> Any:
    return _Tuple(tuple(_keep_tuple(item) for item in value)) if isinstance(value, tuple) else value


def allowed_types(roots: Iterable[Any]) -> set[tuple[str, str]]:
    """(module, name) of every dataclass, enum and callable reachable from ``roots``' type hints."""
    seen: set[Any] = set()
    out: set[tuple[str, str]] = set()
    stack = list(roots)
    while stack:
        item = stack.pop()
        if item in seen:
            continue
        seen.add(item)
        stack += typing.get_args(item)
        if inspect.isfunction(item):  # a restorer named by a __checkpoint__ hook
            out.add((item.__module__, item.__qualname__))
        elif isinstance(item, type) and (dataclasses.is_dataclass(item) or issubclass(item, enum.Enum)):
            out.add((item.__module__, item.__name__))
        if isinstance(item, type) and (dataclasses.is_dataclass(item) or typing.is_typeddict(item)):
            stack += list(typing.get_type_hints(item, include_extras=True).values())
    return out


def open_checkpoint(run_dir: Path, run_id: str, types: Iterable[Any], *, resume: bool,
                    dsn: str | None = None) -> Checkpoint:
    """Open (or create) the run's checkpoints with a strict serializer for ``types``: in PostgreSQL
    at ``dsn`` if given, else in the run folder's SQLite file. A run a service's worker claimed
    (its folder has a claim file) is fenced: once another claim holds it, no write goes through
    (:mod:`controller.platform.fence`).

    Raises:
        EnvironmentFault: the PostgreSQL database cannot be reached or set up.
    """
    fence = read_fence(run_dir)
    saver: SqliteSaver | PostgresSaver
    if dsn is not None:
        saver = postgres_saver(dsn, strict_serializer(types))
    else:
        run_dir.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(run_dir / CHECKPOINT_FILE, check_same_thread=False)
        saver = SqliteSaver(connection, serde=strict_serializer(types))
    return Checkpoint(saver if fence is None else FencedSaver(saver, fence), run_id, resume)


def postgres_saver(dsn: str, serde: JsonPlusSerializer | None = None) -> PostgresSaver:
    """LangGraph's PostgreSQL checkpointer on its own connection, its tables made if missing.

    Raises:
        EnvironmentFault: the database cannot be reached or its tables made (never quoting the DSN).
    """
    import psycopg  # lazy: only with SBX_STATE_DSN
    from psycopg.rows import dict_row

    try:
        conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
    except psycopg.Error as exc:
        raise EnvironmentFault(f"cannot reach the checkpoint database: {first_line(exc)}",
                               hint="check SBX_STATE_DSN") from None
    saver = PostgresSaver(conn, serde=serde)
    try:
        _set_up(saver, conn)
    except psycopg.Error as exc:
        conn.close()
        raise EnvironmentFault(f"cannot set up the checkpoint tables: {first_line(exc)}",
                               hint="the role of SBX_STATE_DSN needs them made once (docs/kubernetes.md)") from None
    return saver


#: LangGraph's checkpoint tables: all a run's role needs (SELECT, INSERT, UPDATE, DELETE) once they exist.
CHECKPOINT_TABLES = ("checkpoint_migrations", "checkpoints", "checkpoint_blobs", "checkpoint_writes")
#: The advisory lock replicas (and runs) make the checkpoint tables under, one at a time.
SETUP_LOCK = 21_000_035


def _set_up(saver: PostgresSaver, conn: Any) -> None:
    """Make the checkpoint tables, or bring them to this LangGraph's, unless they are already: a
    role that may only use them (no CREATE) opens them as they are."""
    if _current(conn):
        return
    conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))
    try:
        saver.setup()  # the migrations not run yet; under the lock, so two starting together run each once
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))


def _current(conn: Any) -> bool:
    if conn.execute("SELECT to_regclass('checkpoint_migrations') AS t").fetchone()["t"] is None:
        return False
    newest = conn.execute("SELECT MAX(v) AS v FROM checkpoint_migrations").fetchone()["v"]
    return newest is not None and int(newest) >= len(PostgresSaver.MIGRATIONS) - 1


def strict_serializer(types: Iterable[Any]) -> StrictSerializer:
    """A serializer that reconstructs only what ``types`` reach (and a few platform types)."""
    return StrictSerializer(allowed_msgpack_modules=sorted(allowed_types(types) | _PLATFORM_TYPES))


def close_checkpoint(checkpoint: Checkpoint | None) -> None:
    """Close the checkpoint file's connection."""
    if checkpoint is not None:
        checkpoint.saver.conn.close()


#: Types of the platform's own that any agent's state may hold.
_PLATFORM_TYPES = {("pathlib", "PosixPath"), ("pathlib", "Path"), ("builtins", "tuple"),
                   ("fractions", "Fraction")}
