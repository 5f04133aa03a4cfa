"""The parser agent end to end, through the real CLI, the real engine and the real PDFs.

What it pins: the ICICI loop passes and publishes its parser; a target that no parser can
satisfy ends as failed (exit 1) without publishing; the expected CSV never enters the
sandbox; and no container outlives a run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents.bank_parser.evaluate import execute_parser, parser_spec
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import PROJECT_ROOT
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")


def run_cli(tmp_path: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SBX_DATA_DIR": str(data_dir),
        "SBX_RUNS_DIR": str(tmp_path / "runs"),
        "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"),
        "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "controller", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )


def summary_of(tmp_path: Path) -> dict[str, object]:
    (summary,) = (tmp_path / "runs").glob("*/summary.json")
    return json.loads(summary.read_text())


class TestIciciLoop:
    def test_icici_passes_and_publishes_the_parser(self, tmp_path, icici_copy):
        """`run --target icici` exits 0, shows each node, and publishes a passing parser."""
        proc = run_cli(tmp_path, icici_copy, "run", "--target", "icici")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "[attempt 1] execute" in proc.stdout
        assert "PASSED" in proc.stdout
        summary = summary_of(tmp_path)
        assert summary["status"] == "passed" and summary["schema_version"] == 1
        parser = tmp_path / "custom_parsers" / "icici_parser.py"
        assert parser.is_file() and "def parse(" in parser.read_text()
        run_dir = Path(str(summary["run_dir"]))
        run_dir = run_dir if run_dir.is_absolute() else tmp_path / run_dir
        assert (run_dir / "attempts" / "1" / "parser.py").is_file()
        assert (run_dir / "attempts" / "1" / "sandbox.json").is_file()

    def test_the_published_parser_passes_check(self, tmp_path, icici_copy):
        """`check` runs a kept parser through the same sandbox and comparison: PASS, exit 0."""
        assert run_cli(tmp_path, icici_copy, "run", "--target", "icici").returncode == 0
        parser = tmp_path / "custom_parsers" / "icici_parser.py"
        proc = run_cli(tmp_path, icici_copy, "check", "--target", "icici", "--parser", str(parser))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        lines = proc.stdout.strip().splitlines()
        assert any(line.startswith(f"PASS {parser}") for line in lines)
        assert lines[-1] == "1 passed, 0 failed"

    def test_check_without_result_csv_judges_by_the_statements_own_figures(self, tmp_path, icici_copy):
        """No result.csv: a correct parser is SELF-CONSISTENT (passed); one that drops a row fails."""
        assert run_cli(tmp_path, icici_copy, "run", "--target", "icici").returncode == 0
        good = tmp_path / "custom_parsers" / "icici_parser.py"
        dropping = tmp_path / "dropping" / "icici_parser.py"
        dropping.parent.mkdir()
        dropping.write_text(good.read_text() + textwrap.dedent("""

            _parse = parse


            def parse(pdf_path):
                frame = _parse(pdf_path)
                return frame.drop(index=frame.index[5]).reset_index(drop=True)
        """))
        (icici_copy / "icici" / "result.csv").unlink()
        proc = run_cli(tmp_path, icici_copy, "check", "--target", "icici", "--parser", str(good), str(dropping))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        rows = {line.split()[0]: line.split()[1] for line in proc.stdout.splitlines()
                if line.startswith(str(tmp_path))}
        assert rows == {str(good): "self-consistent", str(dropping): "fail"}, proc.stdout
        assert proc.stdout.strip().splitlines()[-1] == "1 passed, 1 failed"

    def test_check_many_parsers_ends_with_a_table_and_the_count(self, tmp_path, icici_copy):
        """A folder of parsers, good and bad, gives a table and 'N passed, M failed' last; exit 1."""
        assert run_cli(tmp_path, icici_copy, "run", "--target", "icici").returncode == 0
        good = (tmp_path / "custom_parsers" / "icici_parser.py").read_text()
        folder = tmp_path / "submissions"
        folder.mkdir()
        (folder / "a_good.py").write_text(good)
        (folder / "b_raises.py").write_text("def parse(p):\n    raise KeyError('Date')\n")
        (folder / "c_not_a_frame.py").write_text("def parse(p):\n    return [1, 2]\n")
        proc = run_cli(tmp_path, icici_copy, "check", "--target", "icici", "--parser", str(folder))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = proc.stdout.strip().splitlines()
        assert lines[-1] == "1 passed, 2 failed"
        table = "\n".join(lines)
        assert "execution_error: KeyError" in table and "type_error" in table

    def test_an_impossible_target_gives_up_with_exit_1(self, tmp_path, icici_copy):
        """A result.csv no parser of this PDF can produce ends as failed, with a diff, unpublished."""
        csv = icici_copy / "icici" / "result.csv"
        lines = csv.read_text().splitlines()
        csv.write_text("\n".join([lines[0]] + [line.replace(",", ",9", 1) for line in lines[1:]]) + "\n")
        proc = run_cli(tmp_path, icici_copy, "run", "--target", "icici", "--max-attempts", "2")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "FAILED" in proc.stdout
        assert summary_of(tmp_path)["status"] == "failed"
        assert not (tmp_path / "custom_parsers" / "icici_parser.py").exists()
        assert list((tmp_path / "runs").glob("*/attempts/1/diff.txt"))

    def test_a_target_without_result_csv_passes_only_as_self_consistent(self, tmp_path, icici_copy):
        """No result.csv: the parser passes because its rows agree with the statement's own figures."""
        (icici_copy / "icici" / "result.csv").unlink()
        proc = run_cli(tmp_path, icici_copy, "run", "--target", "icici")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "SELF-CONSISTENT" in proc.stdout
        summary = summary_of(tmp_path)
        assert summary["status"] == "self-consistent"
        assert summary["verified"] == "self-consistent"


class TestExpectedAnswerStaysOut:
    def test_result_csv_is_nowhere_in_the_container(self, docker_client, base_settings, parser_image):
        """A hostile parser searches the whole filesystem for the expected CSV and finds nothing.

        The same search finds the statement PDF, which proves that it looks where it should.
        """
        expected_line = (PROJECT_ROOT / "data/icici/result.csv").read_text().splitlines()[1].encode()
        hunter = textwrap.dedent(f"""
            import os
            import pandas as pd

            NEEDLE = {expected_line[::-1]!r}[::-1]  # reversed, so this file does not match itself

            def parse(pdf_path):
                found, saw_pdf = [], False
                for root, dirs, files in os.walk("/"):
                    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
                    for name in files:
                        path = os.path.join(root, name)
                        saw_pdf = saw_pdf or path == pdf_path
                        if name == "result.csv":
                            found.append(path)
                        try:
                            with open(path, "rb") as handle:
                                if NEEDLE in handle.read(4_000_000):
                                    found.append(path)
                        except OSError:
                            pass
                return pd.DataFrame({{"found": found or ["nothing"], "saw_pdf": saw_pdf}})
        """)
        sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER)
        pdf = (PROJECT_ROOT / "data/icici/icici sample.pdf").read_bytes()
        limits = base_settings.sandbox.model_copy(update={"timeout_seconds": 120})
        execution = execute_parser(sandbox, parser_spec(parser_image, hunter, pdf, limits, {"agent": "pytest"}))
        assert execution.frame is not None, execution.message + execution.detail
        assert list(execution.frame["found"]) == ["nothing"]
        assert bool(execution.frame["saw_pdf"].iloc[0]) is True
