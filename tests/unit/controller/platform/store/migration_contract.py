"""What every database's migrations must do, as test classes run on SQLite (unit) and on a real
PostgreSQL (tests/integration/store): upgrade a release-1 store with data in it and lose
nothing, end with exactly the schema the code declares, migrate once when several start at
once, and refuse a schema newer than this release.

The fixtures: ``raw`` (a SQLAlchemy engine on an empty database), ``open_store`` (a store on
that database, migrating it) and ``opener`` (a picklable (kind, location) for other processes).
"""

from __future__ import annotations

import multiprocessing

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from controller.platform.store import LOCAL_OWNER
from controller.platform.store.migrate import SchemaTooNew, current, head
from controller.platform.store.schema import metadata
from tests.unit.controller.platform.store.contract import new_run, open_again

#: The schema release 1 created by hand (controller/platform/store/sqlite.py and postgres.py as
#: they were before migrations), verbatim but for the dialect's serial key and float type.
RELEASE_1 = """
CREATE TABLE runs (
    seq {serial}, id TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, agent TEXT NOT NULL,
    target TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL, worker TEXT, lease_until {real},
    cancel_requested INTEGER NOT NULL DEFAULT 0, takeovers INTEGER NOT NULL DEFAULT 0,
    created_at {real} NOT NULL, started_at {real}, finished_at {real}, exit_code INTEGER, summary TEXT,
    error TEXT NOT NULL DEFAULT '');
CREATE INDEX runs_by_status ON runs (status, seq);
CREATE INDEX runs_by_owner ON runs (owner, status);
CREATE TABLE tokens (name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL,
    created_at {real} NOT NULL)
"""
ROWS = [  # (id, owner, options, status, created_at): before the first token (t=100), a check, after it
    ("old-run", "local", '{"max_attempts": 2}', "passed", 50.0),
    ("old-check", "local", '{"kind": "check", "paths": ["_submissions/a.py"]}', "failed", 60.0),
    ("tok-run", "local", "{}", "queued", 150.0),
    ("bob-run", "bob", "{}", "running", 160.0),
]


def make_release_1(engine) -> None:  # noqa: ANN001
    serial, real = (("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL") if engine.dialect.name == "sqlite"
                    else ("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION"))
    with engine.begin() as conn:
        for statement in RELEASE_1.format(serial=serial, real=real).split(";"):
            conn.execute(text(statement))
        for run_id, owner, options, status, created in ROWS:
            conn.execute(text("INSERT INTO runs (id, owner, agent, target, options, status, created_at, summary) "
                              "VALUES (:i, :o, 'bank_parser', 'icici', :p, :s, :c, '{\"status\": \"passed\"}')"),
                         {"i": run_id, "o": owner, "p": options, "s": status, "c": created})
        conn.execute(text("INSERT INTO tokens VALUES ('local', 'h-local', 0, 100.0)"))


def differences(conn) -> list[object]:  # noqa: ANN001
    """What the database's schema and the declared one differ in. SQLite stores REAL for both
    REAL and DOUBLE and reads a primary key column of release 1 as nullable: neither is a change."""
    found = []
    for diff in compare_metadata(MigrationContext.configure(conn), metadata):
        change = diff[0] if isinstance(diff, list) else diff
        sqlite = conn.dialect.name == "sqlite"
        if sqlite and change[0] == "modify_type" and {type(change[-2]).__name__, type(change[-1]).__name__} <= {
                "REAL", "Double"}:
            continue
        if sqlite and change[0] == "modify_nullable" and change[3] in ("seq", "name"):
            continue
        found.append(diff)
    return found


def _open_in_a_process(kind: str, location: str, out: multiprocessing.Queue[str]) -> None:
    open_again(kind, location)
    out.put("opened")


class ContractMigrations:
    def test_a_release_1_store_is_upgraded_and_keeps_every_row(self, raw, open_store):
        make_release_1(raw)
        store = open_store()
        assert current(raw) == head()
        rows = {r.id: r for r in store.list_runs(owner=None, target=None, status=None, limit=10, cursor=None).runs}
        assert set(rows) == {r[0] for r in ROWS}
        assert rows["old-run"].summary == {"status": "passed"} and rows["bob-run"].status == "running"
        assert (rows["old-check"].kind, rows["old-run"].kind) == ("check", "run")
        assert store.token_by_hash("h-local") is not None

    def test_runs_from_before_any_token_go_to_the_reserved_owner(self, raw, open_store):
        """The token named 'local' no longer inherits the runs made while no token existed."""
        make_release_1(raw)
        store = open_store()
        owners = {r.id: r.owner for r in store.list_runs(owner=None, target=None, status=None, limit=10,
                                                          cursor=None).runs}
        assert owners == {"old-run": LOCAL_OWNER, "old-check": LOCAL_OWNER, "tok-run": "local", "bob-run": "bob"}

    def test_an_upgraded_store_works(self, raw, open_store):
        make_release_1(raw)
        store = open_store()
        store.submit(new_run(1), quota=9, queue_limit=9)
        claimed = store.claim("w", 30.0)
        assert claimed is not None and claimed.id == "tok-run"  # the oldest queued, from release 1
        assert [e.kind for e in store.events("run-0001", after=0, limit=9)] == ["status"]

    def test_the_migrated_schema_is_the_declared_one(self, raw, open_store):
        open_store()
        with raw.connect() as conn:
            assert differences(conn) == []

    def test_an_upgraded_schema_is_the_declared_one_too(self, raw, open_store):
        make_release_1(raw)
        open_store()
        with raw.connect() as conn:
            assert differences(conn) == []

    def test_opening_again_changes_nothing(self, raw, open_store):
        open_store().submit(new_run(1), quota=9, queue_limit=9)
        assert open_store().get("run-0001") is not None and current(raw) == head()

    def test_a_newer_schema_is_refused_in_one_line(self, raw, open_store):
        open_store()
        with raw.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(SchemaTooNew) as caught:
            open_store()
        line = caught.value.one_line()
        assert "revision 9999, newer than this sandloop knows" in line and "\n" not in line
        assert current(raw) == "9999"  # untouched

    def test_stores_starting_together_migrate_once(self, raw, opener):
        """Four processes open a fresh database at once: all open it, the schema is made once."""
        ctx = multiprocessing.get_context("spawn")
        out: multiprocessing.Queue[str] = ctx.Queue()
        procs = [ctx.Process(target=_open_in_a_process, args=(*opener, out)) for _ in range(4)]
        for p in procs:
            p.start()
        assert [out.get(timeout=120) for _ in procs] == ["opened"] * 4
        for p in procs:
            p.join(timeout=60)
        assert current(raw) == head()
