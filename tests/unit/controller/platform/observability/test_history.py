"""The SQLite run history: what is recorded is what the aggregates report, across reopenings."""

from __future__ import annotations

import sqlite3

import pytest

from controller.platform.observability.history import (
    SCHEMA_VERSION,
    HistoryError,
    HistoryStore,
    RunRecord,
)
from controller.platform.observability.metrics import BUCKETS
from tests.unit.controller.platform.observability.history_contract import ContractRecording
from tests.unit.controller.platform.observability.records import run


@pytest.fixture
def store(tmp_path) -> HistoryStore:
    return HistoryStore(tmp_path / "runs" / "history.sqlite")


@pytest.fixture
def reopen(store):  # noqa: ANN201
    return lambda: HistoryStore(store.path)


class TestRecording(ContractRecording):
    def test_unknown_status_is_refused(self):
        """Statuses are a bounded set: anything else is a programming error."""
        with pytest.raises(ValueError, match="unknown run status"):
            run("maybe")


class TestReading:
    def test_no_file_reads_as_empty(self, store):
        """Before the first run the history reads as empty and no file is created."""
        assert store.snapshot(BUCKETS).runs == {} and store.count_runs() == 0
        assert not store.path.exists()

    def test_reading_needs_no_write_access(self, store, tmp_path):
        """A read-only file (e.g. a read-only mount) can be aggregated."""
        store.record(run())
        store.path.chmod(0o444)
        store.path.parent.chmod(0o555)
        try:
            assert HistoryStore(store.path).snapshot(BUCKETS).runs == {("bank_parser", "icici", "passed"): 1}
        finally:
            store.path.parent.chmod(0o755)

    def test_corrupt_file_is_a_history_error(self, store):
        """A file that is not SQLite raises HistoryError, not sqlite3's own exception."""
        store.path.parent.mkdir(parents=True)
        store.path.write_bytes(b"not a database" * 100)
        with pytest.raises(HistoryError, match="cannot read"):
            store.snapshot(BUCKETS)

    def test_newer_schema_is_refused_for_writing(self, store):
        """A history written by a newer sandloop is not written to by this one."""
        store.path.parent.mkdir(parents=True)
        with sqlite3.connect(store.path) as conn:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        with pytest.raises(HistoryError, match="newer"):
            store.record(run())


class TestRunRecord:
    def test_retries_property_follows_the_rule(self):
        """RunRecord.retries lists the failures of attempts before the last one."""
        record = RunRecord("x", "a", "t", "failed", 2, 3, 0.0, 1.0, 1.0, failures=("oom", "timeout"))
        assert record.retries == ("oom",)
