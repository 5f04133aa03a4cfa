"""One accepted run as a child process, ``python -m controller run``, and how it ended.

A child is exactly a CLI run (the same runner, progress lines, summary.json and exit code),
with the id the service accepted the run under. It runs in its own process group, so a
cancel can stop it and everything it started; ``--watch-stdin`` makes it stop (as on Ctrl-C:
containers removed, checkpoint kept) when the service that holds its stdin dies, so a
service killed with ``kill -9`` leaves no run going on unwatched.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path, PurePosixPath
from typing import Any, cast

from agents.ports.artefacts import SUMMARY_FILE
from agents.ports.errors import RunPaused
from agents.ports.replies import read_question
from agents.ports.status import VERDICT_ROWS, stored_status
from controller.platform.artefacts import RUN_RECORD
from controller.platform.settings import Settings
from controller.platform.store import RunRow, RunStatus
from controller.platform.uploads import UPLOADS, upload_dir
from controller.runner.dispatch.journal import Scrubber

#: ``run`` options a run row may carry, and the CLI option for each.
FORWARDED = {"max_attempts": "--max-attempts", "coder": "--coder", "subject": "--subject"}
#: The exit status of a run that stopped, checkpointed, to wait for a reply (RunPaused).
WAITING = RunPaused.exit_code
CHECK_FORWARDED = {"as_of": "--as-of", "jobs": "--jobs"}
#: The folder of a check's upload that holds its parsers and extracted zips (a target's name
#: starts with a letter or digit, so it can never be this).
SUBMISSIONS = "_submissions"


def resumable(run_dir: Path) -> bool:
    """Whether a run already started there (its run.json exists): continue it with ``--resume``."""
    return (run_dir / RUN_RECORD).is_file()


def command(row: RunRow, run_dir: Path) -> list[str]:
    """The child's command line: a fresh run under the row's id, or the resume of a started one
    (a check: ``check --run-id``, always from the start)."""
    if is_check(row):
        return check_command(row, run_dir)
    base = [sys.executable, "-m", "controller", "run", "--watch-stdin"]
    if resumable(run_dir):
        return [*base, "--resume", row.id]
    options = _forwarded(row, FORWARDED)
    if row.options.get("interactive"):  # replies over the service (a resumed run reads this from run.json)
        options.append("--await-replies")
    return [*base, "--target", row.target, "--run-id", row.id, *options]


def waits(code: int, run_dir: Path) -> bool:
    """Whether the child stopped to wait for a reply: its exit status says so, it left the question
    (question.json) and no summary.json."""
    return code == WAITING and read_question(run_dir) is not None and not (run_dir / SUMMARY_FILE).is_file()


def is_check(row: RunRow) -> bool:
    """A check (``POST /v1/checks``), not a run: no checkpoint; taken over, it starts again."""
    return row.options.get("kind") == "check"


def check_command(row: RunRow, run_dir: Path) -> list[str]:
    """``python -m controller check`` of the check's uploaded parsers and submissions.

    Raises:
        ValueError: the row's paths are not the service's own (relative, under its upload folder).
    """
    upload = run_dir.parent / UPLOADS / row.id
    paths = row.options.get("paths")  # each under SUBMISSIONS: uploads_prefix leaves it out of the lines
    if not isinstance(paths, list) or not paths or not all(_own_path(p) for p in paths):
        raise ValueError(f"check {row.id} has no valid paths")
    return [sys.executable, "-m", "controller", "check", "--watch-stdin", "--run-id", row.id,
            "--target", row.target, *_forwarded(row, CHECK_FORWARDED), "--parser", *(str(upload / p) for p in paths)]


def _forwarded(row: RunRow, options: dict[str, str]) -> list[str]:
    """The row's options that ``options`` maps to the command line's (key -> option), each with its value."""
    return [arg for key, option in options.items() if row.options.get(key) is not None
            for arg in (option, str(row.options[key]))]


def scrubber(settings: Settings, row: RunRow) -> Scrubber:
    """What hides the service's folders in the run's lines, events and artefacts: a check's
    uploads left out, an uploaded run's folder shown as ``data/``."""
    run_dir = settings.runs_dir / row.id
    upload = upload_dir(settings, row.id) if row.options.get("upload") == row.id else None
    return Scrubber.for_service(settings, uploads_prefix(row, run_dir), upload)


def uploads_prefix(row: RunRow, run_dir: Path) -> str | None:
    """What a check's lines show before each upload's name (``…/uploads/<id>/_submissions/``), which
    the service leaves out of what it streams; None for a run."""
    return f"{run_dir.parent / UPLOADS / row.id / SUBMISSIONS}/" if is_check(row) else None


def _own_path(path: object) -> bool:
    parts = PurePosixPath(path).parts if isinstance(path, str) else ()
    return len(parts) >= 2 and parts[0] == SUBMISSIONS and not any(p in ("..", ".", "/") for p in parts)


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """The run's summary.json, if it got that far and it is a JSON object."""
    try:
        data = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def status_of(code: int, summary: dict[str, Any] | None) -> RunStatus:
    """The run's final status from the child's exit code and summary.json (agents.ports.status says
    what each verdict is stored as: a pass of any kind ``passed``, a no-go ``no-go``)."""
    verdict = summary.get("status") if summary is not None else None
    if code in (0, 1) and isinstance(verdict, str):
        return cast(RunStatus, stored_status(verdict))
    if code == 0:
        return "passed"
    return "failed" if code == 1 else "error"


def end_line(status: RunStatus, code: int | None, summary: dict[str, Any] | None, stderr_tail: str) -> str:
    """The run row's one line on how it ended: none for a pass or a failure (the summary says it),
    a no-go's reason (summary.json's ``last_problem``), else the child's error line."""
    if status in VERDICT_ROWS and status != "no-go":
        return ""  # passed, failed, incomplete: the summary says why
    if status == "no-go" and summary is not None:
        return str(summary.get("last_problem") or "the agent decided not to go on")[:500]
    return error_line(code if code is not None else 1, stderr_tail)


def error_line(code: int, stderr_tail: str) -> str:
    """The child's last ``error: …`` line, else how it exited."""
    for line in reversed(stderr_tail.splitlines()):
        if line.startswith("error: "):
            return line[len("error: "):][:500]
        if line.startswith("interrupted"):
            return line[:500]
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the run's process was killed by {name}"
    return f"the run's process exited with status {code}"
