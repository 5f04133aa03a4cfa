"""Hostile parsers against the real CLI and the real engine: what comes back cannot crash,
bloat or mislead the controller.

Each test runs ``python -m controller check`` as a user would (a child process), then
asserts containment: the right failure kind with a one-line reason, exit 1, no traceback,
the child's peak RSS within HEADROOM of a benign check's, no container or volume left, and
nothing written outside the run folder.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.integration.hostile import attacks
from tests.integration.hostile.conftest import (
    HANG_TIMEOUT,
    HEADROOM,
    SUITE_ENV,
    assert_nothing_written_outside_runs,
)
from tests.integration.hostile.harness import (
    MIB,
    Finished,
    check_table,
    controller_env,
    run_controller,
    tree,
)

pytestmark = pytest.mark.usefixtures("no_leftovers")


def write_parsers(folder: Path, sources: dict[str, str]) -> list[Path]:
    paths = []
    for name, source in sources.items():
        path = folder / f"{name}.py"
        path.write_text(source)
        paths.append(path)
    return paths


def check_one(workspace: tuple[Path, Path], name: str, source: str, **env: str) -> tuple[Path, Finished]:
    """Write one parser named ``name`` and run ``check`` on it in a controller child; (its path, the child)."""
    tmp_path, data = workspace
    (parser,) = write_parsers(tmp_path / "parsers", {name: source})
    finished = run_controller(tmp_path, controller_env(tmp_path, data, **{**SUITE_ENV, **env}), "check", "--target",
                              "icici", "--parser", str(parser))
    return parser, finished


def controller_traceback(text: str) -> list[str]:
    """Traceback lines naming the controller's own files (a parser's traceback is the parser's business)."""
    ours = (str(PROJECT_ROOT), sys.prefix, sys.base_prefix)
    return [line for line in text.splitlines() if line.strip().startswith('File "') and any(p in line for p in ours)]


def verdict(lines: list[str]) -> str:
    """The single-parser verdict line of ``check``."""
    return next(line for line in lines if line.startswith(("FAIL ", "PASS ", "UNVERIFIED ")))


def assert_contained(finished, baseline_rss: int) -> None:  # noqa: ANN001
    """Exit 1 (the parsers failed), no traceback anywhere, memory within the headroom."""
    assert finished.code == 1, finished.stdout[-3000:] + finished.stderr[-3000:]
    assert not controller_traceback(finished.stdout + finished.stderr)
    assert finished.peak_rss <= baseline_rss + HEADROOM, (
        f"peak RSS {finished.peak_rss / MIB:.0f} MiB > baseline {baseline_rss / MIB:.0f} + {HEADROOM / MIB:.0f} MiB")


class TestResultDocuments:
    def test_every_hostile_result_json_is_a_clean_failure(self, workspace, baseline_rss, sandbox_runtime):
        """Attack 1, 15 more replaced result.json files, a non-DataFrame, a fork bomb: each its kind and reason."""
        tmp_path, data = workspace
        sources = {name: attacks.atexit_parser(name) for name in attacks.PAYLOADS}
        contract = attacks.contract(sandbox_runtime)
        sources.update({name: source for name, (source, _, _) in contract.items()})
        parsers = write_parsers(tmp_path / "parsers", sources)
        before = tree(tmp_path)
        finished = run_controller(tmp_path, controller_env(tmp_path, data, **SUITE_ENV), "check", "--target",
                                  "icici", "--parser", str(tmp_path / "parsers"), "--jobs", "2")
        assert_contained(finished, baseline_rss)
        rows = check_table(finished.stdout, parsers)
        expected = {**attacks.PAYLOADS, **contract}
        assert set(rows) == set(expected), finished.stdout
        for name, (_, kind, words) in expected.items():
            outcome, reason = rows[name]
            assert outcome == "fail" and reason.startswith(kind), (name, finished.stdout)
            assert words in reason, (name, reason)
        assert finished.stdout.strip().splitlines()[-1] == f"0 passed, {len(parsers)} failed"
        assert_nothing_written_outside_runs(tmp_path, before)
        if sandbox_runtime != "runsc":  # under gVisor the bomb ends the sandbox instead (attacks.GVISOR_CONTRACT)
            bomb = next(p for p in parsers if p.stem == "fork_bomb")  # issue 31: the limit it hit is named
            assert f"limits hit by {bomb}: process limit (128 processes)" in finished.stdout.splitlines()


class TestOutputStreams:
    def test_fake_framing_and_escapes_do_not_reach_the_verdict(self, workspace, baseline_rss):
        """A parser printing fake PASS lines and terminal escapes: FAIL execution_error, no ESC in our output."""
        parser, finished = check_one(workspace, "fake_framing", attacks.FAKE_FRAMING)
        assert_contained(finished, baseline_rss)
        lines = finished.stdout.strip().splitlines()
        assert verdict(lines).startswith(f"FAIL {parser}: execution_error: ValueError")
        assert lines[-1] == "0 passed, 1 failed"
        assert "\x1b" not in finished.stdout and "\x07" not in finished.stdout
        assert not any(line.startswith(("PASS ", "PASSED", "1 passed")) for line in lines)

    def test_an_endless_stderr_line_is_bounded(self, workspace, baseline_rss):
        """24 MiB on one stderr line and a 100 kB message: what is printed stays a few kB."""
        parser, finished = check_one(workspace, "long_stderr", attacks.LONG_STDERR)
        assert_contained(finished, baseline_rss)
        assert verdict(finished.stdout.splitlines()).startswith(f"FAIL {parser}: execution_error: RuntimeError")
        assert len(finished.stdout) < 16 * 1024
        assert max(len(line) for line in finished.stdout.splitlines()) <= 2000 + len(str(parser)) + 200


    def test_output_cut_at_its_limit_is_named_in_the_verdict(self, workspace, baseline_rss):
        """64 MiB on each stream, then a dict: the verdict names the type_error and the cut (issue 31)."""
        parser, finished = check_one(workspace, "floods", attacks.FLOODS_THEN_RETURNS_A_DICT)
        assert_contained(finished, baseline_rss)
        line = verdict(finished.stdout.splitlines())
        assert line.startswith(f"FAIL {parser}: type_error: "), line
        assert re.search(r"limits hit: output cut at 1 MiB \(stdout 64 MiB, stderr 64(\.0)? MiB written\)", line), line


class TestLimitsAndSecrets:
    def test_hangs_and_bombs_are_stopped_by_the_platform(self, workspace, baseline_rss):
        """A hang inside a C call, SIGTERM-ignoring children, a memory bomb: timeout, timeout, oom."""
        tmp_path, data = workspace
        sources = {name: source for name, (source, _) in attacks.LIMITS.items()}
        parsers = write_parsers(tmp_path / "parsers", sources)
        env = controller_env(tmp_path, data, **{**SUITE_ENV, **HANG_TIMEOUT})
        finished = run_controller(tmp_path, env, "check", "--target", "icici", "--parser", *map(str, parsers),
                                  "--jobs", "2")
        assert_contained(finished, baseline_rss)
        rows = check_table(finished.stdout, parsers)
        for name, (_, kind) in attacks.LIMITS.items():
            outcome, reason = rows[name]
            assert outcome == "fail" and reason.startswith(f"{kind}: "), (name, finished.stdout)
        named = {"timeout": "time limit (20 s)", "oom": "memory limit ("}  # issue 31: under the table in full
        for path in parsers:
            limits = next(line for line in finished.stdout.splitlines() if line.startswith(f"limits hit by {path}: "))
            assert named[attacks.LIMITS[path.stem][1]] in limits, limits

    def test_secrets_in_the_controllers_environment_stay_out(self, workspace, baseline_rss):
        """The controller holds API keys; a parser dumping its environment finds none of them."""
        secret = "sk-hostile-suite-0123456789abcdef"
        _, finished = check_one(workspace, "dumps_env", attacks.DUMPS_ENVIRONMENT,
                                OPENAI_API_KEY=secret, SBX_LLM__API_KEY=secret)
        assert_contained(finished, baseline_rss)
        assert "ENV {" in finished.stdout  # the dump came back, without the secret
        assert secret not in finished.stdout + finished.stderr
