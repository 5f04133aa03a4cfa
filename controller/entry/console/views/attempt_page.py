"""An attempt's page: its code, its sandbox output (paged), the frame it produced against the
expected one, its checks, Idris diagnostics or QA verdict, and its sandbox facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from controller.entry.console.views.attempts import Attempt, read_json, read_text
from controller.entry.console.views.code import highlighted
from controller.entry.console.views.frame_table import FrameTable, frame_table
from controller.entry.console.views.frames import expected_frame, produced_frame
from controller.entry.console.views.lines import Window, window
from controller.platform.uploads import KEPT, UPLOADS

STREAMS = ("stdout", "stderr")
PREVIEW_LINES = 200
MAX_DIAGNOSTICS = 200


@dataclass(frozen=True)
class FrameDiff:
    """Expected against produced: the two frames as columns, or why there is none."""

    diff: FrameTable | None
    problem: str


@dataclass(frozen=True)
class AttemptView:
    """What the attempt page shows (each part empty when the attempt has none)."""

    attempt: Attempt
    code: Markup
    code_cut: bool
    logs: dict[str, Window]
    frame: FrameDiff | None
    checks: list[tuple[str, str]]
    report: str
    diagnostics: list[dict[str, str]]
    sandbox: dict[str, Any] = field(default_factory=dict)
    qa: dict[str, Any] = field(default_factory=dict)


def expected_csv(run_dir: Path, target: str) -> Path:
    """The target's result.csv as the run saw it (run.json's data folder: the service's, or the upload's;
    an upload's once it ended: the copy kept with the run, ``kept/<target>/result.csv``)."""
    record = read_json(run_dir / "run.json")
    data_dir = record.get("data_dir") if isinstance(record, dict) else None
    if not data_dir:
        return run_dir / "__no_data_dir__"
    expected = Path(str(data_dir)) / target / "result.csv"
    kept = run_dir / KEPT / target / "result.csv"
    return kept if UPLOADS in expected.parts and not expected.exists() and kept.is_file() else expected


def frame_diff(folder: Path, expected: Path) -> FrameDiff | None:
    """The attempt's frame against the expected one; None when the attempt made no frame at all."""
    if not (folder / "result.json").is_file():
        return None
    produced, wanted = produced_frame(folder / "result.json"), expected_frame(expected)
    problem = produced.problem or wanted.problem
    if UPLOADS in expected.parts and not expected.exists():
        problem = "the uploaded target was removed when its run ended and its result.csv was not kept"
    if produced.problem or not wanted.rows:
        return FrameDiff(None, problem)
    return FrameDiff(frame_table(wanted, produced), problem)


def check_lines(text: str) -> list[tuple[str, str]]:
    """verify.txt's lines as (kind, text): ``held``, ``not-made``, ``failed`` or "" (a plain line)."""
    out = []
    for line in text.splitlines()[:500]:
        stripped = line.strip()
        kind = ("held" if stripped.startswith("[held]") else "not-made" if stripped.startswith("[not made]")
                else "failed" if stripped.startswith(("[failed]", "[broken]")) else "")
        out.append((kind, line))
    return out


def diagnostics(check: Any) -> list[dict[str, str]]:
    """Idris' errors then warnings from check.json, as (severity, where, category, message) rows."""
    if not isinstance(check, dict):
        return []
    rows = []
    for item in [*(check.get("errors") or []), *(check.get("warnings") or [])][:MAX_DIAGNOSTICS]:
        if isinstance(item, dict):
            span = item.get("span") if isinstance(item.get("span"), dict) else {}
            where = f"{item.get('file') or ''}:{span.get('start_line', '')}:{span.get('start_col', '')}" if span else ""
            rows.append({"severity": str(item.get("severity", "")), "where": where,
                         "category": str(item.get("category", "")), "message": str(item.get("message", ""))[:4000],
                         "excerpt": str(item.get("excerpt", ""))[:4000]})
    return rows


def attempt_view(attempt: Attempt, run_dir: Path, target: str) -> AttemptView:
    """The page of ``attempt`` of the run in ``run_dir``."""
    folder = run_dir / "attempts" / str(attempt.number)
    code, cut = highlighted(read_text(folder / attempt.code), attempt.code) if attempt.code else (Markup(""), False)
    logs = {s: window(folder / f"{s}.txt", 1, PREVIEW_LINES) for s in STREAMS if f"{s}.txt" in attempt.files}
    sandbox = read_json(folder / "sandbox.json")
    qa = read_json(folder / "qa.json")
    return AttemptView(
        attempt=attempt, code=code, code_cut=cut, logs=logs, frame=frame_diff(folder, expected_csv(run_dir, target)),
        checks=check_lines(read_text(folder / "verify.txt")), report=read_text(folder / "diff.txt"),
        diagnostics=diagnostics(read_json(folder / "check.json")),
        sandbox=sandbox if isinstance(sandbox, dict) else {}, qa=qa if isinstance(qa, dict) else {})
