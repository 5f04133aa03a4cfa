"""The workers with a stand-in for ``python -m controller run``: outcomes, console copy, cancel,
drain and the takeover of a dead worker's runs. No engine."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.platform.store import NewRun, RunRow
from controller.platform.store.sqlite import SqliteStore
from controller.runner.dispatch import child
from controller.runner.dispatch.launch import Launcher
from controller.runner.dispatch.workers import RunWorkers, new_worker_id, run_env
from tests.unit.controller.entry.service.conftest import make_settings
from tests.waiting import wait_for

#: The stand-in child: its behaviour is the run's target name.
FAKE_CHILD = r"""
import json, pathlib, sys, time
mode, run_dir = sys.argv[1], pathlib.Path(sys.argv[2])
print(f"==> run {run_dir.name}: {mode}", flush=True)
if mode in ("pass", "fail"):
    print("  [attempt 1] compare   " + ("passed" if mode == "pass" else "failed"), flush=True)
    (run_dir / "summary.json").write_text(json.dumps({"status": "passed" if mode == "pass" else "failed"}))
    print("", flush=True)
    print("PASSED: fake" if mode == "pass" else "FAILED: fake", flush=True)
    sys.exit(0 if mode == "pass" else 1)
if mode == "usage":
    print("error: unknown target 'x' (add data/x/)", file=sys.stderr)
    sys.exit(2)
try:  # hang: until interrupted
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    print("interrupted: containers of this run were removed", file=sys.stderr)
    sys.exit(130)
"""


def fake_command(row: RunRow, run_dir: Path) -> list[str]:
    return [sys.executable, "-c", FAKE_CHILD, row.target, str(run_dir)]


@pytest.fixture
def setup(tmp_path: Path):
    settings = make_settings(tmp_path, poll_seconds=0.05, renew_seconds=0.5, lease_seconds=2)
    settings = settings.model_copy(update={"parallel_runs": 2})
    store = SqliteStore(tmp_path / "runs" / "service.sqlite")
    pool = RunWorkers(settings, store, worker_id="me", command=fake_command, env={})
    yield settings, store, pool
    pool.stop(5.0)


def submit(store: SqliteStore, run_id: str, mode: str) -> None:
    store.submit(NewRun(run_id, "alice", "bank_parser", mode), quota=99, queue_limit=99)


def ended(store: SqliteStore, *ids: str) -> Callable[[], bool]:
    return lambda: all((row := store.get(i)) is not None and row.ended for i in ids)


class TestOutcomes:
    def test_each_run_ends_with_its_childs_outcome(self, setup):
        settings, store, pool = setup
        for run_id, mode in (("r-pass", "pass"), ("r-fail", "fail"), ("r-usage", "usage")):
            submit(store, run_id, mode)
        pool.start()
        wait_for(ended(store, "r-pass", "r-fail", "r-usage"), "three runs to end")
        rows = {i: store.get(i) for i in ("r-pass", "r-fail", "r-usage")}
        assert {i: (r.status, r.exit_code) for i, r in rows.items()} == {
            "r-pass": ("passed", 0), "r-fail": ("failed", 1), "r-usage": ("error", 2)}
        assert rows["r-pass"].summary == {"status": "passed"}
        assert rows["r-usage"].error == "unknown target 'x' (add data/x/)"
        console = (settings.runs_dir / "r-pass" / "console.txt").read_text()
        assert console.splitlines() == ["==> run r-pass: pass", "  [attempt 1] compare   passed", "", "PASSED: fake"]

    def test_a_run_that_ended_before_its_worker_said_so_is_not_run_again(self, setup):
        settings, store, pool = setup
        submit(store, "r-done", "hang")  # would hang if it ran
        run_dir = settings.runs_dir / "r-done"
        run_dir.mkdir(parents=True)
        (run_dir / "run.json").write_text("{}")
        (run_dir / "summary.json").write_text('{"status": "failed"}')
        row = store.claim("me", 30.0)
        pool.execute(row)
        after = store.get("r-done")
        assert (after.status, after.exit_code) == ("failed", 1)


class TestStopping:
    def test_cancel_interrupts_the_running_child(self, setup):
        settings, store, pool = setup
        submit(store, "r-hang", "hang")
        pool.start()
        console = settings.runs_dir / "r-hang" / "console.txt"
        wait_for(lambda: console.is_file() and console.read_text().startswith("==> run"), "the child to start")
        store.cancel("r-hang")
        wait_for(ended(store, "r-hang"), "the cancelled run to end")
        row = store.get("r-hang")
        assert (row.status, row.exit_code, row.error) == ("cancelled", 130, "cancelled while it ran")

    def test_a_drain_gives_running_runs_back_to_the_queue(self, setup):
        settings, store, pool = setup
        submit(store, "r-hang", "hang")
        pool.start()
        console = settings.runs_dir / "r-hang" / "console.txt"
        wait_for(lambda: console.is_file() and console.read_text().startswith("==> run"), "the child to start")
        pool.stop(10.0)
        row = store.get("r-hang")
        assert (row.status, row.worker) == ("queued", None)


class SlowLauncher(Launcher):
    """A launcher whose launch takes longer than a lease, as the first warm fork on a busy machine."""

    def launch(self, command, env, stderr):  # type: ignore[no-untyped-def]
        time.sleep(3.0)
        return super().launch(command, env, stderr)


class TestTakeover:
    def test_a_run_whose_launch_outlasts_its_lease_is_held_not_taken_over(self, tmp_path: Path):
        """Issue 32: the lease of a run being launched is renewed and this worker does not take it over
        (before: its own supervisor requeued it as expired while the warm parent still imported)."""
        settings = make_settings(tmp_path, poll_seconds=0.05, renew_seconds=0.5, lease_seconds=2)
        store = SqliteStore(tmp_path / "runs" / "service.sqlite")
        pool = RunWorkers(settings, store, worker_id="me", command=fake_command, env={},
                          launcher=SlowLauncher(warm=False))
        submit(store, "r-slow", "pass")
        pool.start()
        try:
            wait_for(ended(store, "r-slow"), "the slow run to end")
        finally:
            pool.stop(5.0)
        row = store.get("r-slow")
        assert (row.status, row.takeovers) == ("passed", 0)

    def test_a_dead_workers_started_run_is_requeued_to_resume(self, setup):
        settings, store, pool = setup
        submit(store, "r-started", "pass")
        store.claim("dead", -1.0)  # a lease that has run out
        (settings.runs_dir / "r-started").mkdir(parents=True)
        (settings.runs_dir / "r-started" / "run.json").write_text("{}")
        pool.take_over_expired()
        row = store.get("r-started")
        assert (row.status, row.takeovers) == ("queued", 1)
        assert child.command(row, settings.runs_dir / "r-started")[-2:] == ["--resume", "r-started"]

    def test_a_dead_workers_unstarted_run_is_requeued_to_start_afresh(self, setup):
        """Issue 31: a run claimed but not started (no run.json) was ended as error, losing it; now it
        goes back to the queue and starts from the beginning."""
        settings, store, pool = setup
        submit(store, "r-never", "pass")
        store.claim("dead", -1.0)
        pool.take_over_expired()
        row = store.get("r-never")
        assert (row.status, row.takeovers, row.error) == ("queued", 1, "")
        assert "--resume" not in child.command(row, settings.runs_dir / "r-never")

    def test_a_run_whose_workers_keep_dying_ends_after_max_takeovers(self, setup):
        """Three takeovers requeue it; the fourth death ends it as error, saying why."""
        settings, store, pool = setup
        submit(store, "r-poison", "pass")
        for n in range(settings.service.max_takeovers + 1):
            store.claim(f"dead-{n}", -1.0)
            pool.take_over_expired()
        row = store.get("r-poison")
        assert (row.status, row.takeovers) == ("error", 4)
        assert "its workers stopped 4 times" in row.error and "dead-3" in row.error
        reasons = [e.data.get("reason", "") for e in store.events("r-poison", after=0, limit=99)]
        assert sum("stopped renewing its lease" in r for r in reasons) == 3  # each takeover is in its history

    def test_a_dead_worker_of_this_host_is_taken_over_at_once(self, setup):
        """A worker on this host whose process is gone (a service killed with -9 and restarted): its
        runs are taken over without waiting for the lease (it was 30 s)."""
        settings, store, pool = setup
        submit(store, "r-killed", "pass")
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        store.claim(f"{socket.gethostname()}:{dead.pid}.1:abcdef", 300.0)
        other_host = "elsewhere:1:abcdef"
        submit(store, "r-remote", "pass")
        store.claim(other_host, 300.0)
        pool.take_over_expired()
        assert store.get("r-killed").status == "queued"
        assert store.get("r-remote").status == "running"  # another host's worker: only its lease tells

    def test_a_restarted_process_with_the_same_pid_is_not_its_predecessor(self, setup):
        """A container's service is pid 1 after every restart: the start time tells them apart."""
        settings, store, pool = setup
        submit(store, "r-before", "pass")
        store.claim(f"{socket.gethostname()}:{os.getpid()}.1:abcdef", 300.0)
        pool.take_over_expired()
        assert store.get("r-before").status == "queued"

    def test_another_live_pool_of_this_process_is_alive(self, setup):
        settings, store, pool = setup
        submit(store, "r-sibling", "pass")
        store.claim(new_worker_id(), 300.0)
        pool.take_over_expired()
        assert store.get("r-sibling").status == "running"

    def test_live_leases_are_left_alone(self, setup):
        settings, store, pool = setup
        submit(store, "r-live", "pass")
        store.claim("other", 60.0)
        pool.take_over_expired()
        assert store.get("r-live").status == "running"

    def test_an_own_run_without_a_child_is_taken_over_not_held(self, setup):
        """A run this worker claimed but no longer runs (its end could not be recorded) is neither
        renewed nor skipped: it expires and is taken over like a dead worker's."""
        settings, store, pool = setup
        submit(store, "r-orphan", "pass")
        store.claim("me", -1.0)
        assert pool.renew() == 0
        pool.take_over_expired()
        assert store.get("r-orphan").status == "queued"


class TestChildCommand:
    def test_a_fresh_run_carries_its_id_and_options(self, tmp_path):
        store = SqliteStore(tmp_path / "s.sqlite")
        store.submit(NewRun("r-1", "alice", "bank_parser", "icici", {"max_attempts": 2, "coder": "offline"}),
                     quota=9, queue_limit=9)
        command = child.command(store.get("r-1"), tmp_path / "r-1")
        assert command[1:] == ["-m", "controller", "run", "--watch-stdin", "--target", "icici", "--run-id", "r-1",
                               "--max-attempts", "2", "--coder", "offline"]

    @pytest.mark.parametrize(("code", "summary", "status"), [
        (0, {"status": "passed"}, "passed"), (0, {"status": "unverified"}, "passed"),
        (1, {"status": "failed"}, "failed"), (1, {"status": "error"}, "error"), (3, {"status": "error"}, "error"),
        (2, None, "error"), (0, None, "passed"), (1, None, "failed"), (-9, None, "error"), (130, None, "error"),
    ])
    def test_status_of(self, code, summary, status):
        assert child.status_of(code, summary) == status

    def test_error_line(self):
        assert child.error_line(2, '{"event": "x"}\nerror: no Docker engine (start one)\n') == (
            "no Docker engine (start one)")
        assert child.error_line(-9, "") == "the run's process was killed by SIGKILL"
        assert child.error_line(3, "") == "the run's process exited with status 3"


def test_a_run_child_never_gets_the_stores_dsn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The PostgreSQL DSN is the service's secret; the runs it starts never open the store."""
    monkeypatch.setenv("SBX_SERVICE__POSTGRES_DSN", "postgresql://sandloop:secret@db/sandloop")
    monkeypatch.setenv("SBX_SERVICE__STORE", "postgres")
    env = run_env(make_settings(tmp_path))
    assert not any("secret" in value for value in env.values())
    assert "SBX_SERVICE__STORE" not in env and env["SBX_RUNS_DIR"] == str(tmp_path / "runs")
