"""Where the run history and the lessons are, for the process that asks (issue 34).

- The CLI alone, and a service on SQLite: the embedded files ``<runs_dir>/history.sqlite`` and
  ``<runs_dir>/lessons.sqlite``, as before (the exporter can read the history read-only).
- A service on PostgreSQL: its store (tables ``history_*`` and ``lesson_*``, revision 0004), so
  every replica reads and writes one history and one set of lessons, and no SQLite file is
  written under the runs folder.
- A run's child of a service on PostgreSQL never gets the store's DSN (a secret stays out of a
  run's process). The service gives it its lessons in its folder before it starts
  (:func:`give_lessons`) and, when it ends, keeps in the store what it left there
  (:func:`keep_handoff`): its history record and its lessons, JSON validated field by field.
- The runs' graph checkpoints and the intake agents' graph memories are in PostgreSQL when
  ``SBX_STATE_DSN`` is set (a role that may use only those tables, which every run's process
  gets): :func:`prepare_state`.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import structlog
from sqlalchemy import Connection, Engine, Table, select, text

from agents.lessons import HANDOFF_FILE as LESSONS_HANDOFF
from agents.lessons import (
    LESSONS_FILE,
    RECORD,
    ExecutionHistory,
    LessonsUnreadable,
    give_lessons,
    read_bounded,
)
from controller.platform.checkpoints import postgres_saver
from controller.platform.memory_sql import SqlMemoryStores
from controller.platform.observability.handoff import HANDOFF_FILE as HISTORY_HANDOFF
from controller.platform.observability.handoff import read_handoff
from controller.platform.observability.history import HistoryError, HistoryStore
from controller.platform.observability.recorder import history_path
from controller.platform.settings import Settings, state_dsn
from controller.platform.store import schema
from controller.platform.store.engine import postgres_engine, translated
from controller.platform.store.migrate import MIGRATE_LOCK

log = structlog.get_logger("sandloop.store")


def postgres_engine_of(store: object) -> Engine | None:
    """The engine of ``store`` if it is on PostgreSQL (None: SQLite, or no store)."""
    engine = getattr(store, "engine", None)
    return engine if isinstance(engine, Engine) and engine.dialect.name == "postgresql" else None


def run_history(settings: Settings, store: object = None) -> HistoryStore:
    """The run history: in ``store`` if it is on PostgreSQL, else the SQLite file."""
    engine = postgres_engine_of(store)
    return HistoryStore.in_store(engine) if engine is not None else HistoryStore(history_path(settings))


def exported_history(settings: Settings) -> HistoryStore:
    """What ``serve --metrics-only`` exports: the store's history when the service is on PostgreSQL
    (every replica's runs; the exporter migrates nothing: the service owns the schema), else
    ``history.sqlite``, read as before (a read-only mount will do)."""
    if settings.service.store == "postgres" and settings.service.postgres_dsn is not None:
        from controller.platform.store import open_store  # lazy: psycopg only when it is chosen

        return run_history(settings, open_store(settings, migrate=False))
    return HistoryStore(history_path(settings))


def lessons_of(settings: Settings, store: object = None) -> ExecutionHistory:
    """The lessons: in ``store`` if it is on PostgreSQL, else ``<runs_dir>/lessons.sqlite``."""
    engine = postgres_engine_of(store)
    return (ExecutionHistory.in_store(engine) if engine is not None
            else ExecutionHistory(settings.runs_dir / LESSONS_FILE))


def hands_off(store: object) -> bool:
    """Whether the runs of a service on ``store`` hand their history and lessons over (PostgreSQL)."""
    return postgres_engine_of(store) is not None


def give_run_lessons(settings: Settings, store: object, run_dir: Path, agent: str, target: str) -> None:
    """Before a run starts: its lessons in its folder (PostgreSQL; nothing to do on SQLite)."""
    if not hands_off(store):
        return
    try:
        give_lessons(run_dir, agent, target, lessons_of(settings, store).lessons(agent, target))
    except OSError as exc:  # an aid, not a requirement: the run goes on without lessons
        log.warning("lessons.give_failed", run_dir=str(run_dir), error=str(exc)[:200])


def keep_handoff(settings: Settings, store: object, run_dir: Path) -> None:
    """When a run ends: keep in the store the history record and lessons it left, then remove them."""
    if hands_off(store):
        keep_records(run_history(settings, store), lessons_of(settings, store), run_dir)


def keep_records(history: HistoryStore, lessons: ExecutionHistory, run_dir: Path) -> None:
    """Keep the hand-off files of ``run_dir`` in ``history`` and ``lessons`` (once, however often called)."""
    _keep_history(history, run_dir)
    _keep_lessons(lessons, run_dir)


def _keep_history(history: HistoryStore, run_dir: Path) -> None:
    try:
        record = read_handoff(run_dir)
        if record is not None and not history.has_run(record.run_id):
            history.record(record)
    except (OSError, ValueError, HistoryError) as exc:
        log.error("history.handoff_failed", run_dir=str(run_dir), error=str(exc)[:200])
        return
    (run_dir / HISTORY_HANDOFF).unlink(missing_ok=True)


def _keep_lessons(lessons: ExecutionHistory, run_dir: Path) -> None:
    path = run_dir / LESSONS_HANDOFF
    try:
        run = RECORD.validate_json(read_bounded(path))
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        log.error("lessons.handoff_failed", run_dir=str(run_dir), error=str(exc)[:200])
        return
    try:
        lessons.keep(run)
    except LessonsUnreadable as exc:  # the file stays: the next end of a run on this folder keeps it
        log.error("lessons.handoff_failed", run_dir=str(run_dir), error=exc.one_line())
        return
    path.unlink(missing_ok=True)


#: What an earlier release's file is renamed to once its rows are in the store (kept, never written).
ADOPTED_SUFFIX = ".adopted"


def adopt_files(settings: Settings, store: object) -> None:
    """At a PostgreSQL service's start: copy the rows of an earlier release's ``history.sqlite`` and
    ``lessons.sqlite`` into the store (runs it already has are skipped), then rename each file
    ``*.adopted``, so nothing recorded before the upgrade is lost and nothing is copied twice.

    Raises:
        StoreError: the store cannot be written (the files are left as they were).
    """
    engine = postgres_engine_of(store)
    if engine is None:
        return
    for path, tables in ((history_path(settings), HISTORY_COPIES), (settings.runs_dir / LESSONS_FILE, LESSON_COPIES)):
        if path.is_file():
            _adopt(engine, path, tables)


def _adopt(engine: Engine, path: Path, tables: dict[str, Table]) -> None:
    try:
        with translated(f"adopting {path.name}"), \
                closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=30.0)) as source, \
                engine.begin() as conn:
            conn.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATE_LOCK})"))  # replicas adopt one at a time
            copied = _copy_new_runs(source, conn, tables)
        path.replace(path.with_name(path.name + ADOPTED_SUFFIX))
    except (sqlite3.Error, OSError) as exc:  # another replica adopted it meanwhile, or it is unreadable: kept
        log.warning("store.adopt_skipped", file=path.name, error=str(exc)[:200])
        return
    log.info("store.adopted", file=path.name, runs=copied)


#: The store's table for each table of the files, parents first.
HISTORY_COPIES = {"runs": schema.history_runs, "attempt_failures": schema.history_attempt_failures,
                  "node_runs": schema.history_node_runs, "sandbox_executions": schema.history_sandbox_executions,
                  "sandbox_infra_retries": schema.history_infra_retries}
LESSON_COPIES = {"runs": schema.lesson_runs, "failures": schema.lesson_failures}


def _copy_new_runs(source: sqlite3.Connection, conn: Connection, tables: dict[str, Table]) -> int:
    """Copy the rows of the runs ``conn`` does not have yet; how many runs that was."""
    parent = next(iter(tables.values()))
    known = {row[0] for row in conn.execute(select(parent.c.run_id))}
    new_runs: set[str] = set()
    for name, table in tables.items():
        had = {row[1] for row in source.execute(f"PRAGMA table_info({name})")}  # an older file lacks some
        columns = [c.name for c in table.columns if c.name in had and c.autoincrement is not True]
        if "run_id" not in columns:
            continue
        found = [dict(zip(columns, row, strict=True))
                 for row in source.execute(f"SELECT {', '.join(columns)} FROM {name} ORDER BY rowid")]
        fresh = [row for row in found if row["run_id"] not in known]
        new_runs.update(row["run_id"] for row in fresh)
        if fresh:
            conn.execute(table.insert(), fresh)
    return len(new_runs)


def prepare_state(settings: Settings, store: object) -> None:
    """At a service's start (and ``db upgrade``): with ``SBX_STATE_DSN``, the checkpoint tables made
    and the memory tables readable through it; on PostgreSQL without it, a warning that runs still
    keep checkpoints and graph memories in SQLite files.

    Raises:
        EnvironmentFault: the state database cannot be reached, its tables made or read.
    """
    dsn = state_dsn(settings)
    if dsn is not None:
        postgres_saver(dsn).conn.close()
        engine = postgres_engine(dsn, timeout=10.0)
        try:
            SqlMemoryStores(engine).check()
        finally:
            engine.dispose()
    elif hands_off(store):
        log.warning("state.in_run_folders", hint="set SBX_STATE_DSN: any replica then resumes any run and "
                                                 "continues any conversation")
