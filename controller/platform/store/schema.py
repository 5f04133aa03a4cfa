"""The run store's tables, declared once for SQLite and PostgreSQL (SQLAlchemy Core).

These declarations are what the code reads and writes; the schema a database actually has is
made by the Alembic migrations in ``migrations/versions`` (one per release that changed it), and
``tests/unit/controller/platform/store/test_migrations.py`` checks that the two agree.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)

metadata = MetaData()

#: An autoincrementing key: BIGSERIAL on PostgreSQL, SQLite's INTEGER PRIMARY KEY (a rowid alias).
Serial = BigInteger().with_variant(Integer(), "sqlite")

runs = Table(
    "runs", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("id", Text, nullable=False, unique=True),
    Column("owner", Text, nullable=False),
    Column("agent", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("options", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("worker", Text),
    Column("lease_until", Double),
    Column("cancel_requested", Integer, nullable=False, server_default="0"),
    Column("takeovers", Integer, nullable=False, server_default="0"),
    Column("created_at", Double, nullable=False),
    Column("started_at", Double),
    Column("finished_at", Double),
    Column("exit_code", Integer),
    Column("summary", Text),
    Column("error", Text, nullable=False, server_default=""),
    # revision 0002 (issue 31) ----------------------------------------------------------------
    Column("kind", Text, nullable=False, server_default="run"),  # "run" or "check"
    Column("last_event", Integer, nullable=False, server_default="0"),  # the run's newest event's seq
    Column("upload_bytes", BigInteger, nullable=False, server_default="0"),  # its upload's size on disk
    Column("upload_held", Integer, nullable=False, server_default="0"),  # 1 while its upload is on disk
    # revision 0007 (issue 43) ----------------------------------------------------------------
    Column("kept_bytes", BigInteger, nullable=False, server_default="0"),  # what it kept of its upload (kept/)
    sqlite_autoincrement=True,
)
Index("runs_by_status", runs.c.status, runs.c.seq)
Index("runs_by_owner", runs.c.owner, runs.c.status)
Index("runs_by_upload", runs.c.upload_held, runs.c.status)

tokens = Table(
    "tokens", metadata,
    Column("name", Text, primary_key=True),
    Column("hash", Text, nullable=False, unique=True),
    Column("admin", Integer, nullable=False),
    Column("created_at", Double, nullable=False),
)

#: Everything that happened to a run, numbered from 1 without gaps: its status changes, the lines
#: its process printed, its nodes' starts and ends, its questions. The event stream serves these
#: (``id:`` is ``seq``), so a reconnect resumes exactly after the last event it got.
run_events = Table(
    "run_events", metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("kind", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("at", Double, nullable=False),
)

#: ``Idempotency-Key`` of a submission: the same key, owner and request give back the same run.
idempotency_keys = Table(
    "idempotency_keys", metadata,
    Column("owner", Text, primary_key=True),
    Column("key", Text, primary_key=True),
    Column("request_hash", Text, nullable=False),
    Column("run_id", Text, nullable=False),
    Column("created_at", Double, nullable=False),
)
Index("idempotency_by_age", idempotency_keys.c.created_at)

#: Console sign-ins (revision 0003, issue 30): the SHA-256 of a browser's session id, the token it
#: signed in with, and when it expires. Any replica verifies a session here; sign-out deletes it.
sessions = Table(
    "sessions", metadata,
    Column("hash", Text, primary_key=True),
    Column("token", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("expires_at", Double, nullable=False),
)
Index("sessions_by_token", sessions.c.token)

# revision 0004 (issue 34): the run history and the lessons, when the store is PostgreSQL ----------
# The same tables as the embedded files (``history.sqlite``, ``lessons.sqlite``), named with a
# prefix: the statements are written once (observability/history.py, agents/lessons.py) and take
# the tables' names from the place they run on (a file, or this store).

def _required(kind: Any, *names: str) -> list[Column[Any]]:
    """Columns that every row fills (NOT NULL), of one type."""
    return [Column(name, kind, nullable=False) for name in names]


#: What each run ended with (``history.sqlite``'s ``runs``): /metrics, the dashboards, the console.
history_runs = Table(
    "history_runs", metadata,
    Column("run_id", Text, primary_key=True),
    *_required(Text, "agent", "target", "status"),
    *_required(Integer, "attempts", "max_attempts"),
    *_required(Double, "started_at", "finished_at", "duration_seconds", "sandbox_seconds"),
    *_required(Text, "coder"),
    Column("error", Text, nullable=False, server_default=""),
)
Index("history_runs_by_target", history_runs.c.agent, history_runs.c.target, history_runs.c.status)


def _history_child(name: str, *columns: Column[Any]) -> Table:
    """A table of rows that belong to one history run (deleted with it)."""
    table = Table(name, metadata,
                  Column("run_id", Text, ForeignKey("history_runs.run_id", ondelete="CASCADE"), nullable=False),
                  *columns)
    Index(f"{name}_by_run", table.c.run_id)
    return table


history_attempt_failures = _history_child(
    "history_attempt_failures", *_required(Integer, "attempt"), *_required(Text, "reason"),
    *_required(Integer, "retried"))
history_node_runs = _history_child(
    "history_node_runs", *_required(Text, "node"), *_required(Integer, "attempt"), *_required(Text, "outcome"),
    *_required(Double, "duration_seconds"))
history_sandbox_executions = _history_child(
    "history_sandbox_executions", *_required(Text, "image", "image_ref", "outcome"),
    *_required(Double, "duration_seconds"), Column("exit_code", Integer), *_required(Integer, "attempt"),
    Column("pool", Text, nullable=False, server_default="none"), Column("warmup_seconds", Double))
history_infra_retries = _history_child("history_infra_retries", *_required(Text, "image", "reason"))

#: The runs the lessons were drawn from (``lessons.sqlite``'s ``runs``).
lesson_runs = Table(
    "lesson_runs", metadata,
    Column("run_id", Text, primary_key=True),
    *_required(Text, "agent", "target", "coder", "status"),
    *_required(Integer, "attempts"),
    *_required(Text, "fixed_by"),
    *_required(Double, "recorded_at"),
)

#: Each failed attempt and its lessons (``lessons.sqlite``'s ``failures``).
lesson_failures = Table(
    "lesson_failures", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("run_id", Text, ForeignKey("lesson_runs.run_id", ondelete="CASCADE"), nullable=False),
    *_required(Text, "agent", "target"),
    *_required(Integer, "attempt"),
    *_required(Text, "kind", "summary"),
    Column("lesson", Text),
    *_required(Integer, "fixed"),
    *_required(Double, "recorded_at"),
    sqlite_autoincrement=True,
)
Index("lesson_failures_by_target", lesson_failures.c.agent, lesson_failures.c.target, lesson_failures.c.recorded_at)

# revision 0005 (issue 34): the intake agents' graph memories --------------------------------------
# One memory per ``key``: ``subject:<subject key>`` (a person, across conversations; never the
# name) or ``run:<run id>`` (a run without a subject). In PostgreSQL a run's process reaches them
# with SBX_STATE_DSN (a role limited to them and to the checkpoints), never with the store's DSN;
# on SQLite each memory's file holds them (controller/platform/memory_sql.py, issue 44).

#: The subject's name as first given.
memory_subjects = Table(
    "memory_subjects", metadata,
    Column("key", Text, primary_key=True),
    *_required(Text, "name"),
)
#: Each field's current value.
memory_fields = Table(
    "memory_fields", metadata,
    Column("key", Text, primary_key=True), Column("node", Text, primary_key=True),
    Column("field", Text, primary_key=True),
    Column("value", Text), *_required(Integer, "skipped"), *_required(Text, "updated_at"),
)
#: Every value ever given.
memory_history = Table(
    "memory_history", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    *_required(Text, "key", "node", "field"),
    Column("value", Text), Column("previous", Text), Column("temporal", Text), Column("source", Text),
    Column("reasoning", Text), *_required(Integer, "applied", "correction"),
    *_required(Text, "run_id"), *_required(Integer, "turn"), *_required(Text, "at"),
    sqlite_autoincrement=True,
)
Index("memory_history_by_key", memory_history.c.key, memory_history.c.id)
#: Contradictions, open until a later turn resolves them.
memory_conflicts = Table(
    "memory_conflicts", metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    *_required(Text, "key", "node", "field"),
    Column("old", Text), Column("new", Text),
    *_required(Text, "run_id"), *_required(Integer, "turn"), *_required(Text, "at"),
    *_required(Integer, "resolved"), Column("resolution", Text),
    sqlite_autoincrement=True,
)
Index("memory_conflicts_by_key", memory_conflicts.c.key, memory_conflicts.c.id)
#: The (run, turn) of every write applied: a write is applied at most once.
memory_commits = Table(
    "memory_commits", metadata,
    Column("key", Text, primary_key=True), Column("run_id", Text, primary_key=True),
    Column("turn", Integer, primary_key=True, autoincrement=False), *_required(Text, "at"),
)
#: Each conversation's target, from its first write (what ``follows`` looks for).
memory_conversations = Table(
    "memory_conversations", metadata,
    Column("key", Text, primary_key=True), Column("run_id", Text, primary_key=True),
    *_required(Text, "target", "at"),
)

# revision 0006 (issue 34): an intake run's conversation log, when runs use PostgreSQL -------------
#: Each run's conversation (agents.ports.memory.ConversationLog): entries by kind under (step, name).
memory_log = Table(
    "memory_log", metadata,
    Column("run_id", Text, primary_key=True), Column("kind", Text, primary_key=True),
    Column("step", Integer, primary_key=True, autoincrement=False), Column("name", Text, primary_key=True),
    *_required(Text, "data", "at"),
)
