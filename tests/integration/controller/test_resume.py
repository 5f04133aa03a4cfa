"""Resume after a real interruption, through the real CLI and the real engine.

A copy of the ICICI target whose result.csv has one cell changed makes the offline coder
mismatch on every attempt, so the run goes through three attempts. The test interrupts the
child `python -m controller run` (SIGKILL: a crashed machine or a killed Pod; SIGINT: Ctrl-C)
as soon as attempt 1's compare has been printed, i.e. after attempt 1's sandbox execution
finished and was checkpointed, then runs `run --resume RUN_ID`. Nothing that finished runs
again: no analyze, generate, save or execute of attempt 1 (no coder call, no sandbox
execution), attempt 1's records are untouched, and the run ends as an uninterrupted one does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")


def cli_env(tmp_path: Path, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ, "SBX_DATA_DIR": str(data_dir), "SBX_RUNS_DIR": str(tmp_path / "runs"),
        "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
        # A loaded CI machine must not turn a slow container start into a timeout failure.
        "SBX_SANDBOX__TIMEOUT_SECONDS": "120",
    }


def cli(tmp_path: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=tmp_path, env=cli_env(tmp_path, data_dir),
                          capture_output=True, text=True, timeout=900, check=False)


def spoil_one_cell(data_dir: Path) -> None:
    """Change the first row's balance in result.csv: no parser can match it any more."""
    csv = data_dir / "icici" / "result.csv"
    lines = csv.read_text().splitlines()
    cells = lines[1].split(",")
    cells[-1] = f"{float(cells[-1]) + 1:.2f}"
    lines[1] = ",".join(cells)
    csv.write_text("\n".join(lines) + "\n")


#: Attempts of the interrupted run. The signal must land between attempt 1's compare and the
#: run's end; at about 0.6 s per warm attempt, three attempts left a window of 1.6 s, which a
#: loaded machine (or a long GC pause in pytest) sometimes missed. Six leave about 4 s.
ATTEMPTS = 6


def interrupt_after(tmp_path: Path, data_dir: Path, marker: str, sig: int) -> tuple[str, str, int]:
    """Start `run --target icici`, send ``sig`` once ``marker`` is printed; return (run id, output, status)."""
    child = subprocess.Popen([sys.executable, "-m", "controller", "run", "--target", "icici",
                              "--max-attempts", str(ATTEMPTS)], cwd=tmp_path,
                             env=cli_env(tmp_path, data_dir), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    seen = []
    assert child.stdout is not None
    for line in child.stdout:
        seen.append(line)
        if marker in line:
            child.send_signal(sig)
            break
    seen.append(child.stdout.read())
    status = child.wait(timeout=120)
    output = "".join(seen)
    run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", output, re.M)
    assert run_id and marker in output, output
    return run_id[1], output, status


def execute_events(run_dir: Path, attempt: int) -> int:
    """How many times attempt ``attempt``'s execute node finished, over every process of the run."""
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    return sum(e.get("event") == "node.finished" and e.get("node") == "execute" and e.get("attempt") == attempt
               for e in events)


class TestResumeAfterInterruption:
    @pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
    def test_resume_skips_every_finished_node(self, tmp_path, icici_copy, sig):
        """After an interruption past attempt 1, --resume skips attempt 1 entirely and finishes the run."""
        spoil_one_cell(icici_copy)
        run_id, first, status = interrupt_after(tmp_path, icici_copy, "[attempt 1] compare", sig)
        if sig == signal.SIGINT:
            assert status == 130 and f"--resume {run_id}" in first
        else:
            assert status == -signal.SIGKILL
        run_dir = tmp_path / "runs" / run_id
        assert not (run_dir / "summary.json").exists()
        record = run_dir / "attempts" / "1" / "sandbox.json"
        before = (record.read_bytes(), record.stat().st_mtime_ns)

        resumed = cli(tmp_path, icici_copy, "run", "--resume", run_id)

        assert resumed.returncode == 1, resumed.stdout + resumed.stderr  # every attempt a mismatch: gave up
        skipped = next(line for line in resumed.stdout.splitlines() if "resuming run" in line)
        for node in ("analyze", "generate [1]", "save [1]", "execute [1]"):
            assert node in skipped
        steps = [line.strip() for line in resumed.stdout.splitlines() if line.startswith("  [")]
        assert steps and not any(s.startswith(("[setup]", "[attempt 1]")) for s in steps), steps
        assert (record.read_bytes(), record.stat().st_mtime_ns) == before
        assert execute_events(run_dir, 1) == 1
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["status"] == "failed" and summary["attempts"] == ATTEMPTS
        assert all(execute_events(run_dir, n) == 1 for n in range(2, ATTEMPTS + 1))


def node_events(run_dir: Path) -> list[tuple[str, int]]:
    """(node, attempt) of every node that finished, over every process of the run."""
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    return [(e["node"], e.get("attempt", 0)) for e in events if e.get("event") == "node.finished"]


class TestStoppedAtTheEnd:
    def test_a_run_stopped_after_its_graph_ended_resumes_to_its_summary(self, tmp_path, icici_copy):
        """Killed after its graph's last checkpoint, before summary.json (the SQLite chaos test hit
        that window once, and the service then ended a passing run as an error): --resume runs
        nothing again and writes the summary the run would have written."""
        done = cli(tmp_path, icici_copy, "run", "--target", "icici")
        assert done.returncode == 0, done.stdout + done.stderr
        run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", done.stdout, re.M)[1]  # type: ignore[index]
        run_dir = tmp_path / "runs" / run_id
        first = json.loads((run_dir / "summary.json").read_text())
        (run_dir / "summary.json").unlink()  # exactly what that kill leaves: every checkpoint, no summary
        nodes = node_events(run_dir)

        resumed = cli(tmp_path, icici_copy, "run", "--resume", run_id)

        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "had ended before the run's summary was written" in resumed.stdout
        assert node_events(run_dir) == nodes  # no node ran again: no coder call, no execution
        again = json.loads((run_dir / "summary.json").read_text())
        assert again["status"] == first["status"] == "passed"
        assert (again["attempts"], again["parser_path"]) == (first["attempts"], first["parser_path"])


class TestReaderGone:
    def test_a_run_whose_output_nobody_reads_stops_resumable_not_as_an_error(self, tmp_path, icici_copy):
        """The reader of a run's stdout goes away (the service that ran it died, or `… | head`):
        the run stops as on Ctrl-C, exit 141, one line naming the resume, no summary.json; before,
        the broken pipe was recorded as a crash of the loop, status error."""
        child = subprocess.Popen([sys.executable, "-m", "controller", "run", "--target", "icici"], cwd=tmp_path,
                                 env=cli_env(tmp_path, icici_copy), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        assert child.stdout is not None and child.stderr is not None
        first = ""
        while not first.startswith("==> run "):
            first = child.stdout.readline()
            assert first, "the run ended before saying its id"
        child.stdout.close()  # the reader goes away before the first node's line
        errors = child.stderr.read()
        assert child.wait(timeout=300) == 141, errors
        run_id = first.split()[2].rstrip(":")
        run_dir = tmp_path / "runs" / run_id
        assert f"continue it with: python -m controller run --resume {run_id}" in errors
        assert "BrokenPipe" not in errors and "a bug in sandloop" not in errors
        assert not (run_dir / "summary.json").exists()

        resumed = cli(tmp_path, icici_copy, "run", "--resume", run_id)

        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "passed"
