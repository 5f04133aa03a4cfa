"""Warm run processes (issue 32): forks of multiprocessing's real fork server running the real CLI,
each with its own environment and streams; commands that are not the CLI start cold. No engine."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from controller.runner.dispatch import warm_child
from controller.runner.dispatch.launch import CONTROLLER, Launcher, WarmProcess


@pytest.fixture(scope="module")
def launcher() -> Launcher:
    warm = Launcher(warm=True)
    assert warm.warm is not None
    warm.warm.start()  # synchronously here: the fork server has imported the preload when this returns
    return warm


def launch(launcher: Launcher, *args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run the CLI with ``args`` warm; its exit status, stdout and stderr."""
    with tempfile.TemporaryFile("w+b") as errors:
        proc = launcher.launch([*CONTROLLER, *args], env, errors)
        assert isinstance(proc, WarmProcess)
        assert proc.stdout is not None and proc.stdin is not None
        out = proc.stdout.read()
        code = proc.wait()
        proc.stdin.close()
        errors.seek(0)
        return code, out, errors.read().decode()


def env_for(root: Path) -> dict[str, str]:
    return {**os.environ, "SBX_RUNS_DIR": str(root / "runs"), "SBX_LOG_FORMAT": "json"}


class TestWarmForks:
    def test_each_run_sees_its_own_environment_and_nothing_of_the_run_before(self, launcher: Launcher,
                                                                            tmp_path: Path):
        """A token added under one run's SBX_RUNS_DIR is not in the next run's, which has another."""
        first, second = env_for(tmp_path / "a"), env_for(tmp_path / "b")
        code, out, _ = launch(launcher, "tokens", "add", "alice", env=first)
        assert code == 0 and "alice" in out
        assert "alice" in launch(launcher, "tokens", "list", env=first)[1]
        code, out, _ = launch(launcher, "tokens", "list", env=second)
        assert code == 0 and "alice" not in out

    def test_a_refused_command_exits_2_with_its_line_as_the_cold_cli_does(self, launcher: Launcher,
                                                                          tmp_path: Path):
        """argparse's refusal ends the fork with status 2 and its usage line on stderr."""
        code, _, err = launch(launcher, "run", "--no-such-option", env=env_for(tmp_path))
        cold = subprocess.run([*CONTROLLER, "run", "--no-such-option"], env=env_for(tmp_path),
                              capture_output=True, text=True, check=False)
        assert code == cold.returncode == 2
        assert err.splitlines()[-1] == cold.stderr.splitlines()[-1]
        assert "is required" in err

    def test_a_killed_fork_reports_its_signal_and_the_next_one_runs(self, launcher: Launcher, tmp_path: Path):
        """SIGKILL to a fork's group ends that fork (negative status); the parent goes on forking."""
        with tempfile.TemporaryFile("w+b") as errors:
            proc = launcher.launch([*CONTROLLER, "tokens", "list"], env_for(tmp_path), errors)
            os.kill(proc.pid, 9)
            assert proc.wait() in (-9, 0)  # it may have ended before the signal came
        assert launch(launcher, "tokens", "list", env=env_for(tmp_path))[0] == 0

    def test_forks_are_children_of_the_warm_parent_not_of_the_service(self, launcher: Launcher):
        """The fork server is this process's child; it has already imported the agents."""
        warm = launcher.warm
        assert warm is not None
        server = warm.server_pid()
        assert server is not None and server != os.getpid()
        assert _parent(server) == os.getpid()


class TestColdCommands:
    def test_a_command_that_is_not_the_cli_starts_cold(self, launcher: Launcher):
        """A test double's shell line is a Popen in its own process group."""
        with tempfile.TemporaryFile("w+b") as errors:
            proc = launcher.launch(["/bin/sh", "-c", "echo hi"], dict(os.environ), errors)
            assert isinstance(proc, subprocess.Popen)
            assert proc.stdout is not None and proc.stdout.read() == "hi\n"
            assert proc.wait() == 0

    def test_warm_off_starts_the_cli_cold(self):
        with tempfile.TemporaryFile("w+b") as errors:
            proc = Launcher(warm=False).launch([*CONTROLLER, "tokens", "--help"], dict(os.environ), errors)
            assert isinstance(proc, subprocess.Popen)
            proc.communicate()
            assert proc.returncode == 0


class TestLateImports:
    def test_only_watched_packages_imported_after_the_fork_are_named(self):
        before = {"agents", "json"}
        now = [*before, "agents.bank_parser.coders.offline", "csv", "pandas.core.methods.to_dict", "email.parser"]
        assert warm_child.late_imports(before, now) == ["agents.bank_parser.coders.offline",
                                                       "pandas.core.methods.to_dict"]

    def test_the_preload_names_modules_that_exist(self):
        """Every preloaded module imports (the fork server skips one that does not, silently)."""
        code = "import sys; from controller.runner.dispatch import warm_child as w; w.preload(); print('ok')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        assert done.stdout.strip() == "ok", done.stderr[-2000:]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
