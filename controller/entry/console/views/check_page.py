"""A check's page: one row per parser or submission with its verdict, time, rows and first
difference (as ``check`` prints its table), each linking to its code.

What a check keeps is its summary's verdicts (the child records them) and the uploads it
checked (``runs/uploads/<id>/_submissions/``); it keeps no frame per parser, so a verdict's
page shows its code and its first difference, not a frame diff (a run's attempt page has that).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.entry.service.check_models import CheckOut, CheckSummary
from controller.runner.dispatch import SUBMISSIONS
from controller.platform.uploads import upload_dir
from controller.platform.settings import Settings
from controller.platform.store import RunRow


@dataclass(frozen=True)
class VerdictLine:
    """One checked artefact: its name, verdict, rows, seconds, first difference and its upload's path."""

    name: str
    status: str
    rows: int | None
    seconds: float
    first_difference: str
    path: str


def verdict_lines(summary: CheckSummary | None) -> list[VerdictLine]:
    """The summary's verdicts, in its order (failures are what a reader looks for: they stay in place)."""
    if summary is None:
        return []
    return [VerdictLine(v.name, v.status, v.rows, v.seconds, v.first_difference, f"{SUBMISSIONS}/{v.name}")
            for v in summary.verdicts]


def check_document(row: RunRow) -> CheckOut:
    """The API's document of the check (its summary validated)."""
    return CheckOut.of(row)


def submission_file(settings: Settings, row: RunRow, name: str) -> Path | None:
    """The uploaded parser ``name`` of the check (a .py file), or None (a folder, or no such upload)."""
    if "/" in name or name.startswith(".") or not name.endswith(".py"):
        return None
    path = upload_dir(settings, row.id) / SUBMISSIONS / name
    return path if path.is_file() and not path.is_symlink() else None


def options_of(row: RunRow) -> dict[str, Any]:
    """The check's options a reader wants (as of, jobs), without its internal paths."""
    return {k: v for k, v in row.options.items() if k in ("as_of", "jobs")}
