"""What the run history does wherever it is: the SQLite file (test_history.py), the SQLite run
store's tables and the PostgreSQL store's (revision 0004, issue 34)."""

from __future__ import annotations

import pytest

from controller.platform.observability.history import HistoryError, HistoryStore
from controller.platform.observability.metrics import BUCKETS
from tests.unit.controller.platform.observability.records import run


class ContractRecording:
    """Needs fixtures ``store`` (an empty :class:`HistoryStore`) and ``reopen`` (another one on the same data)."""

    def test_runs_are_counted_by_agent_target_status(self, store, reopen):
        """Each recorded run counts once under its (agent, target, status), also after reopening."""
        for record in (run("passed"), run("passed"), run("failed", attempts=3), run("error", target="sbi")):
            store.record(record)
        snapshot = reopen().snapshot(BUCKETS)
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
        assert dict(zip(attempts.buckets, attempts.cumulative)) == {1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 8: 2, 13: 2,
                                                                    20: 2, 50: 2}
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

    def test_a_run_is_read_back_as_recorded(self, store: HistoryStore):
        """Every column of a run row is kept; has_run knows it; the target's views read it."""
        record = run("failed", attempts=2, failures=("mismatch", "timeout"), finished_at=500.0)
        store.record(record)
        (row,) = store.read_runs()
        assert row["run_id"] == record.run_id and row["status"] == "failed" and row["finished_at"] == 500.0
        assert store.has_run(record.run_id) and not store.has_run("nope")
        assert store.target_runs("bank_parser", "icici") == [(500.0, "failed", 2)]
        assert store.target_failures("bank_parser", "icici") == {"mismatch": 1, "timeout": 1}
