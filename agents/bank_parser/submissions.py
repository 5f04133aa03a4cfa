"""Find the submissions in what ``controller check`` was given, and pack their modules.

A folder holding a ``requirements.txt``, a ``pyproject.toml`` or a ``custom_parsers/``
folder is one submission; a folder of such folders is a class. A submission's parser is
``custom_parsers/<target>_parser.py``, else its one ``*_parser.py``; its other .py files go
into the sandbox with it as ``submission.zip`` (paths as in the folder, no symlinks, no
``..``, bounded), so that its own imports work. Its declared packages make its environment,
and its last git commit date (when it is a git checkout) is the date they resolve as of.
"""

from __future__ import annotations

import io
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agents.ports.environments import (
    PYPROJECT_FILE,
    REQUIREMENTS_FILE,
    DeclaredEnv,
    parse_as_of,
    read_declared,
)
from agents.ports.errors import TargetError

ARCHIVE_NAME = "submission.zip"
MAX_MODULES = 400
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "tests", "test"}
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Submission:
    """One submission: where it is, its parser (or why none), its declaration and date."""

    name: str
    root: Path
    parser: Path | None
    declared: DeclaredEnv
    commit_date: str | None
    problem: str = ""


def is_submission(folder: Path) -> bool:
    """A folder with a requirements.txt, a pyproject.toml or a custom_parsers/ folder."""
    return folder.is_dir() and (
        (folder / REQUIREMENTS_FILE).is_file() or (folder / PYPROJECT_FILE).is_file()
        or (folder / "custom_parsers").is_dir()
    )


def find_submissions(paths: list[str], target: str) -> list[Submission] | None:
    """The submissions (each folder, or each member of a class); None when none is among ``paths``."""
    found: list[Submission] = []
    plain: list[str] = []
    for raw in paths:
        folder = Path(raw)
        members = [folder] if is_submission(folder) else (
            sorted(child for child in folder.iterdir() if is_submission(child)) if folder.is_dir() else [])
        found += [load_submission(member, member.name, target) for member in members]
        if not members:
            plain.append(raw)
    if found and plain:
        raise TargetError(f"{', '.join(plain)}: not a submission folder or a class of them",
                          hint="check submission folders and plain parser files in separate calls")
    return found or None


def load_submission(root: Path, name: str, target: str) -> Submission:
    """Read one submission folder: its parser, declaration and commit date."""
    parser, problem = find_parser(root, target)
    return Submission(name, root, parser, read_declared(root), git_commit_date(root), problem)


def find_parser(root: Path, target: str) -> tuple[Path | None, str]:
    """``custom_parsers/<target>_parser.py``, else the one ``*_parser.py``; else (None, why)."""
    preferred = root / "custom_parsers" / f"{target}_parser.py"
    if preferred.is_file() and not preferred.is_symlink():
        return preferred, ""
    candidates = [path for path in python_files(root) if path.name.endswith("_parser.py")]
    named = [path for path in candidates if path.name == f"{target}_parser.py"]
    if len(named) == 1:
        return named[0], ""
    if len(candidates) == 1:
        return candidates[0], ""
    if not candidates:
        return None, f"no custom_parsers/{target}_parser.py and no *_parser.py"
    return None, f"{len(candidates)} *_parser.py files and none is custom_parsers/{target}_parser.py"


def python_files(root: Path) -> list[Path]:
    """The submission's .py files: regular files, not under hidden, cache, venv or test folders."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(part.startswith(".") or part in _SKIP_DIRS for part in parts[:-1]):
            continue
        if path.is_file() and not _through_symlink(root, parts):
            found.append(path)
    return found[:MAX_MODULES]


def _through_symlink(root: Path, parts: tuple[str, ...]) -> bool:
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def module_archive(submission: Submission) -> bytes:
    """A zip of the submission's .py files at their relative paths (and the parser's siblings at top level)."""
    entries: dict[str, bytes] = {}
    total = 0
    for path in python_files(submission.root):
        data = path.read_bytes()
        total += len(data)
        if total > MAX_ARCHIVE_BYTES:
            break
        entries[_arcname(path.relative_to(submission.root))] = data
        if submission.parser is not None and path.parent == submission.parser.parent != submission.root:
            entries.setdefault(path.name, data)  # run-from-its-folder imports: `from base_parser import X`
    return _zip(entries)


def _arcname(relative: Path) -> str:
    name = PurePosixPath(relative.as_posix())
    if name.is_absolute() or ".." in name.parts:
        raise ValueError(f"unsafe path in a submission: {relative}")
    return str(name)


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), entries[name])
    return buffer.getvalue()


def git_commit_date(folder: Path) -> str | None:
    """The last commit's date (UTC, for uv) when ``folder`` is the top of a git checkout, else None.

    The repository is untrusted: git runs without its hooks, pager or fsmonitor.
    """
    if not (folder / ".git").exists():
        return None
    command = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-pager",
               "-C", str(folder), "log", "-1", "--format=%cI"]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        return parse_as_of(proc.stdout.strip()) if proc.returncode == 0 else None
    except ValueError:
        return None
