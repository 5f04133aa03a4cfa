"""The CLI as a user meets it: bad input is one line on stderr and exit 2, never a traceback,
and nothing is written. These run the real ``python -m controller`` without Docker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ICICI


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "data"
    if not data.exists():
        shutil.copytree(ICICI, data / "icici")
    full_env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"),
                "SBX_PARSERS_DIR": str(tmp_path / "parsers"), **env}
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=tmp_path, env=full_env,
                          capture_output=True, text=True, timeout=120, check=False)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc.stderr + proc.stdout
    for needle in needles:
        assert needle in lines[0]


class TestUsageErrors:
    @pytest.mark.parametrize("name", ["../x", "a/b"])
    def test_target_name_that_is_not_plain(self, tmp_path, name):
        """Path-like target names are refused with exit 2."""
        assert_one_line_error(cli(tmp_path, "run", "--target", name), "not a target name")

    def test_unknown_target_lists_known(self, tmp_path):
        """An unknown target names the known ones."""
        assert_one_line_error(cli(tmp_path, "run", "--target", "sbi"), "unknown target", "icici")

    def test_corrupt_pdf(self, tmp_path):
        """A corrupt PDF is an input error and nothing is written."""
        cli(tmp_path, "--help")
        (tmp_path / "data" / "icici" / "icici sample.pdf").write_bytes(b"garbage")
        assert_one_line_error(cli(tmp_path, "run", "--target", "icici"), "not a PDF")
        assert not (tmp_path / "runs").exists() and not (tmp_path / "parsers").exists()

    def test_no_docker_engine(self, tmp_path):
        """Without a reachable engine the user is told how to start one."""
        proc = cli(tmp_path, "run", "--target", "icici", DOCKER_HOST="unix:///nonexistent/docker.sock")
        assert_one_line_error(proc, "no Docker engine is reachable", "start it")
        assert not (tmp_path / "runs").exists()

    def test_missing_parser_file_for_check(self, tmp_path):
        """check with a parser path that does not exist is exit 2."""
        assert_one_line_error(cli(tmp_path, "check", "--target", "icici", "--parser", "nope.py"),
                              "no parser file")

    def test_invalid_setting(self, tmp_path):
        """A bad setting in the environment is one line naming it."""
        proc = cli(tmp_path, "run", "--target", "icici", SBX_SANDBOX__MEMORY_MB="lots")
        assert_one_line_error(proc, "sandbox.memory_mb")

    def test_bad_max_attempts(self, tmp_path):
        """--max-attempts 0 is refused by validation."""
        assert_one_line_error(cli(tmp_path, "run", "--target", "icici", "--max-attempts", "0"),
                              "max_attempts")

    def test_help_documents_every_option(self, tmp_path):
        """run --help lists --target and --max-attempts."""
        out = cli(tmp_path, "run", "--help").stdout
        assert "--target" in out and "--max-attempts" in out

    def test_check_refuses_a_target_of_another_agent(self, tmp_path):
        """check runs parsers; an Idris target (target.toml agent = idris) is refused, exit 2."""
        from tests.conftest import PROJECT_ROOT

        data = tmp_path / "data"
        shutil.copytree(ICICI, data / "icici")
        shutil.copytree(PROJECT_ROOT / "data" / "service-contract", data / "service-contract")
        proc = cli(tmp_path, "check", "--target", "service-contract", "--parser", str(ICICI / "result.csv"))
        assert_one_line_error(proc, "idris agent")


class TestUnexpectedErrors:
    def test_a_bug_is_one_line_and_exit_3(self, monkeypatch, capsys):
        """An exception no code expected still ends in one line on stderr and exit 3, no traceback."""
        from controller.entry import cli, commands

        def broken(args, settings):  # noqa: ANN001, ANN202
            raise RecursionError("maximum recursion depth exceeded\nsecond line")

        monkeypatch.setattr(commands, "check", broken)
        code = cli.main(["check", "--target", "icici", "--parser", "x.py"])
        err = capsys.readouterr().err
        assert code == 3
        assert err.count("\n") == 1 and "RecursionError" in err and "Traceback" not in err

    def test_a_crashed_loop_is_one_line_and_exit_3(self, monkeypatch, capsys):
        """LoopCrashed (what the agent loop raises on a bug) prints its line and exits 3."""
        from agents.loop import LoopCrashed
        from controller.entry import cli, commands

        def crashed(args, settings):  # noqa: ANN001, ANN202
            raise LoopCrashed(KeyError("x"))

        monkeypatch.setattr(commands, "run", crashed)
        assert cli.main(["run", "--target", "icici"]) == 3
        err = capsys.readouterr().err
        assert err.startswith("error: the agent loop stopped on an unexpected KeyError") and err.count("\n") == 1


EXIT_NOW_SCRIPT = """
import os, sys, threading, time
from controller.entry.cli import exit_now
class Teardown:
    def __del__(self):
        os.write(1, b"interpreter teardown\\n")
keep = Teardown()
if sys.argv[1] == "daemon":
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
if sys.argv[1] == "worker":
    threading.Thread(target=lambda: (time.sleep(0.3), os.write(1, b"worker done\\n"))).start()
exit_now(5)
"""


@pytest.mark.parametrize(("threads", "output"), [
    ("none", ""),
    ("daemon", ""),  # the service child's stdin watch: no reason for the half-second teardown
    ("worker", "worker done\ninterpreter teardown\n"),  # its work might not be done: the normal exit waits
])
def test_exit_now_skips_the_teardown_unless_a_non_daemon_thread_is_alive(threads: str, output: str):
    proc = subprocess.run([sys.executable, "-c", EXIT_NOW_SCRIPT, threads], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parents[4], check=False)
    assert (proc.returncode, proc.stdout) == (5, output)


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`python -m controller graph --agent bank_parser | true` (the reader gone before the first line):
    no 'unexpected BrokenPipeError' line."""
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m controller graph --agent bank_parser | true", shell=True,
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    assert "BrokenPipe" not in proc.stderr and "a bug in sandloop" not in proc.stderr
