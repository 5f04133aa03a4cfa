"""The SQLite run history: what is recorded is what the aggregates report, across reopenings."""

from __future__ import annotations

import sqlite3

import pytest

from controller.platform.observability.history import SCHEMA_VERSION, HistoryError, HistoryStore, RunRecord
from controller.platform.observability.metrics import BUCKETS
from tests.unit.controller.platform.observability.records import run


@pytest.fixture
def store(tmp_path) -> HistoryStore:
    return HistoryStore(tmp_path / "runs" / "history.sqlite")


class TestRecording:
    def test_runs_are_counted_by_agent_target_status(self, store):
        """Each recorded run counts once under its (agent, target, status), also after reopening."""
        for record in (run("passed"), run("passed"), run("failed", attempts=3), run("error", target="sbi")):
            store.record(record)
        snapshot = HistoryStore(store.path).snapshot(BUCKETS)
        assert snapshot.runs == {("bank_parser", "icici", "passed"): 2, ("bank_parser", "icici", "failed"): 1,
                                 ("bank_parser", "sbi", "error"): 1}
        assert store.count_runs() == 4

    def test_only_failures_followed_by_another_attempt_are_retries(self, store):
        """A run that passed on attempt 3 retried twice; one that gave up after 3 failures also twice."""
        store.record(run("passed", attempts=3, failures=("timeout", "mismatch")))
        store.record(run("failed", attempts=3, failures=("oom", "mismatch", "type_error")))
        assert store.snapshot(BUCKETS).retries == {("bank_parser", "icici", "timeout"): 1,
                                                   ("bank_parser", "icici", "mismatch"): 2,
                                                   ("bank_parser", "icici", "oom"): 1}

    def test_histograms_are_cumulative(self, store):
        """Attempt and duration histograms count observations at or below each bound."""
        store.record(run(attempts=1, seconds=2.0))
        store.record(run(attempts=3, seconds=45.0))
        snapshot = store.snapshot(BUCKETS)
        attempts = snapshot.attempts[("bank_parser", "icici")]
        assert dict(zip(attempts.buckets, attempts.cumulative)) == {1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 8: 2, 13: 2, 20: 2, 50: 2}
        assert (attempts.count, attempts.total) == (2, 4.0)
        seconds = snapshot.run_seconds[("bank_parser", "icici")]
        assert seconds.cumulative[seconds.buckets.index(2.5)] == 1 and seconds.cumulative[-1] == 2
        assert seconds.total == 47.0

    def test_sandbox_and_nodes_are_kept(self, store):
        """Sandbox executions count by agent, target, image and outcome; nodes time by agent and node."""
        store.record(run(sandbox=(("timeout", 30.5), ("ok", 2.0))))
        snapshot = store.snapshot(BUCKETS)
        key = ("bank_parser", "icici", "sandloop/python-parser")
        assert snapshot.sandbox_runs == {(*key, "timeout"): 1, (*key, "ok"): 1}
        assert snapshot.sandbox_seconds[key].count == 2
        assert snapshot.node_seconds[("bank_parser", "execute")].count == 1

    def test_last_success_is_the_latest_passing_run(self, store):
        """The last success of a target is the end of its latest passing run; failures don't move it."""
        store.record(run("passed", finished_at=100.0))
        store.record(run("passed", finished_at=200.0))
        store.record(run("failed", finished_at=300.0))
        assert store.last_success("bank_parser", "icici") == 200.0
        assert store.snapshot(BUCKETS).last_success == {("bank_parser", "icici"): 200.0}
        assert store.last_success("bank_parser", "sbi") is None

    def test_duplicate_run_id_is_refused_and_nothing_half_written(self, store):
        """Recording the same run twice fails as a whole: the history still holds it once."""
        record = run()
        store.record(record)
        with pytest.raises(HistoryError):
            store.record(record)
        assert store.count_runs() == 1
        assert store.snapshot(BUCKETS).sandbox_runs[("bank_parser", "icici", "sandloop/python-parser", "ok")] == 1

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
