"""A run's attempts: what each left in ``attempts/<n>/`` and how its nodes ended.

The artefact an attempt is about is the first of :data:`CODE_FILES` it holds (a parser, an
Idris module, a blueprint's report); the rest are shown by kind: the sandbox's output
(stdout, stderr), the comparison (diff, frames), the checks (verify), Idris' diagnostics
(check.json), QA's verdict (qa.json).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.entry.console.views.nodes import NodeEnd

ATTEMPTS = "attempts"
MAX_ATTEMPTS = 500
CODE_FILES = ("parser.py", "report.md")
MAX_JSON = 4 * 1024 * 1024


@dataclass(frozen=True)
class Attempt:
    """One attempt: its number, files (name → bytes), the nodes that ended in it, and its code file."""

    number: int
    files: dict[str, int]
    ends: tuple[NodeEnd, ...]
    code: str

    @property
    def outcome(self) -> str:
        """The outcome of the attempt's last node ("" before any ended)."""
        return self.ends[-1].outcome if self.ends else ""


def code_file(files: dict[str, int]) -> str:
    """The attempt's main artefact: a parser, a report, or an Idris module (``*.idr``)."""
    for name in CODE_FILES:
        if name in files:
            return name
    return next((name for name in sorted(files) if name.endswith(".idr")), "")


def _files(folder: Path) -> dict[str, int]:
    found = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
            found[path.name] = path.stat().st_size
    return found


def attempt_numbers(run_dir: Path) -> list[int]:
    """The numbers of the attempt folders, in order."""
    root = run_dir / ATTEMPTS
    if not root.is_dir() or root.is_symlink():
        return []
    numbers = sorted(int(p.name) for p in root.iterdir() if p.name.isascii() and p.name.isdigit() and p.is_dir())
    return numbers[:MAX_ATTEMPTS]


def attempt(run_dir: Path, number: int, ends: list[NodeEnd]) -> Attempt | None:
    """Attempt ``number`` of the run, or None if it has no folder."""
    folder = run_dir / ATTEMPTS / str(number)
    if number not in attempt_numbers(run_dir) or folder.is_symlink():
        return None
    files = _files(folder)
    return Attempt(number, files, tuple(e for e in ends if e.attempt == number), code_file(files))


def attempts(run_dir: Path, ends: list[NodeEnd]) -> list[Attempt]:
    """Every attempt of the run."""
    found = (attempt(run_dir, n, ends) for n in attempt_numbers(run_dir))
    return [a for a in found if a is not None]


def read_json(path: Path) -> Any:
    """A JSON file the run wrote (ours, but bounded); None if it is missing or not JSON."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_JSON + 1)
        return None if len(raw) > MAX_JSON else json.loads(raw)
    except (OSError, ValueError):
        return None


def read_text(path: Path, limit: int = 1024 * 1024) -> str:
    """A text file of the run, its first ``limit`` bytes, decoded leniently ("" if missing)."""
    try:
        with path.open("rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""
