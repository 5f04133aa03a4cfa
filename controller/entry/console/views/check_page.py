"""A check's page: one row per parser or submission with its verdict, time, rows and first
difference (as ``check`` prints its table), each linking to its code.

What a check keeps is its summary's verdicts (the child records them) and the code it checked:
in its upload (``runs/uploads/<id>/_submissions/``) while it runs, then in ``runs/<id>/kept/``
(the same layout; housekeeping copies the .py files there before removing the upload). It keeps
no frame per parser, so a verdict's page shows its code and its first difference, not a frame
diff (a run's attempt page has that).

A verdict is named as ``check`` names it: a parser file given itself (``icici_parser.py``), a
parser found in a given folder (a class zip's ``alice/icici_parser.py``), or a submission folder
(``alice``), whose page shows its .py files, its parsers first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from controller.entry.service.check_models import CheckSummary
from controller.platform.settings import Settings
from controller.platform.store import RunRow
from controller.platform.uploads import kept_dir, upload_dir
from controller.runner.dispatch import SUBMISSIONS

#: Most files a submission folder's verdict page shows.
MAX_FILES = 20


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


def submission_files(settings: Settings, row: RunRow, name: str) -> list[tuple[str, Path]]:
    """The code of the verdict ``name``: (its name, its file), one parser or a submission's .py files
    (at most :data:`MAX_FILES`, parsers first); kept with the check, else in its upload; [] if none."""
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or any(p in ("..", ".") or p.startswith(".") for p in parts):
        return []
    paths = row.options.get("paths")
    given = [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []
    for root in (kept_dir(settings, row.id), upload_dir(settings, row.id)):
        for path in given:
            found = _found(root, PurePosixPath(path), parts)
            if found is not None:
                return _code_of(found, name)
    return []


def _found(root: Path, given: PurePosixPath, parts: tuple[str, ...]) -> Path | None:
    """``root/given`` when the verdict is that path itself, else ``root/given/<name>``; never through a link."""
    relative = given.parts if given.name == "/".join(parts) else (*given.parts, *parts)
    if any(p in ("..", ".", "/") for p in given.parts):
        return None
    current = root
    for part in relative:
        current = current / part
        if current.is_symlink() or not current.exists():
            return None
    return current


def _code_of(found: Path, name: str) -> list[tuple[str, Path]]:
    if found.is_file():
        return [(name, found)] if found.suffix == ".py" else []
    files = sorted((p for p in found.rglob("*.py") if p.is_file() and not _linked(found, p)),
                   key=lambda p: (not p.name.endswith("_parser.py"), p.relative_to(found).as_posix()))
    return [(f"{name}/{p.relative_to(found).as_posix()}", p) for p in files[:MAX_FILES]]


def _linked(root: Path, path: Path) -> bool:
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink() or part.startswith("."):
            return True
    return False


def options_of(row: RunRow) -> dict[str, Any]:
    """The check's options a reader wants (as of, jobs), without its internal paths."""
    return {k: v for k, v in row.options.items() if k in ("as_of", "jobs")}
