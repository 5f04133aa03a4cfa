"""A run's files, served without ever leaving its folder.

The run's internal files (its checkpoints, its claim, the files it hands the service) are the
platform's, not the run's results: never listed, never served (issue 42: an owner could
download ``checkpoints.sqlite``).

A requested path is checked by its parts (no empty, ``.``, ``..``, absolute or backslash
part, no NUL), then walked one component at a time with ``lstat`` so that no symlink is
followed anywhere on the way, and the final file is opened with ``O_NOFOLLOW``; the
resolved path must still lie inside the run folder. Anything else is 404.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from agents.lessons import GIVEN_FILE
from agents.lessons import HANDOFF_FILE as LESSONS_HANDOFF
from controller.entry.service.problems import Problem
from controller.platform.checkpoints import CHECKPOINT_FILE
from controller.platform.fence import CLAIM_FILE
from controller.platform.observability.handoff import HANDOFF_FILE as HISTORY_HANDOFF
from controller.platform.sandbox.warm_offer import REPORT_FILE
from controller.runner.dispatch import Scrubber

#: Text artefacts up to this size are served with the service's folders replaced (``runs/``,
#: ``data/``; a check's uploads folder left out): a run writes absolute paths for its own resume
#: (run.json's data folder, summary.json's run folder, events.jsonl's history file), and no
#: client is shown where the service keeps anything (issue 42). Larger files go out as they are.
SCRUB_MAX = 8 << 20
MAX_PATH = 512
MAX_LISTED = 2000
#: Top-level files of a run folder that are the platform's own (SQLite's side files included).
INTERNAL = frozenset({CLAIM_FILE, REPORT_FILE, HISTORY_HANDOFF, GIVEN_FILE, LESSONS_HANDOFF,
                      *(CHECKPOINT_FILE + suffix for suffix in ("", "-wal", "-shm", "-journal"))})


def internal(relative: str) -> bool:
    """Whether ``relative`` (to the run folder) names one of the platform's own files."""
    return relative in INTERNAL


def _not_found(relative: str) -> Problem:
    return Problem(404, f"no artefact {relative[:200]!r} in this run")


def safe_file(run_dir: Path, relative: str) -> Path:
    """The regular file ``relative`` inside ``run_dir``.

    Raises:
        Problem: 404 for anything that is not a regular file reached without a symlink inside it.
    """
    parts = relative.split("/")
    if (not relative or internal(relative) or len(relative) > MAX_PATH or "\x00" in relative or "\\" in relative
            or any(part in ("", ".", "..") for part in parts)):
        raise _not_found(relative)
    here = run_dir
    for part in parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            raise _not_found(relative) from None
        if stat.S_ISLNK(mode):
            raise _not_found(relative)
    if not stat.S_ISREG(mode):
        raise _not_found(relative)
    root = run_dir.resolve()
    if not here.resolve().is_relative_to(root):
        raise _not_found(relative)
    return here


def open_file(path: Path) -> int:
    """A read-only descriptor of ``path`` that refuses a symlink swapped in since the check."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        raise _not_found(path.name) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_found(path.name)
    return fd


def listing(run_dir: Path) -> list[tuple[str, int]]:
    """Every regular file under ``run_dir`` (symlinks neither listed nor followed), with its size."""
    found: list[tuple[str, int]] = []
    if not run_dir.is_dir() or run_dir.is_symlink():
        return found
    for root, dirs, files in os.walk(run_dir, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            info = os.lstat(path)
            relative = path.relative_to(run_dir).as_posix()
            if stat.S_ISREG(info.st_mode) and not internal(relative):
                found.append((relative, info.st_size))
            if len(found) >= MAX_LISTED:
                return found
    return found


def served(fd: int, scrub: Scrubber) -> tuple[Iterator[bytes], int]:
    """The body of an artefact and its length: a UTF-8 text file scrubbed of the service's
    folders, anything else (or larger than :data:`SCRUB_MAX`) streamed as it is."""
    size = os.fstat(fd).st_size
    if size > SCRUB_MAX:
        return _chunks(fd), size
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(SCRUB_MAX)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return iter([data]), len(data)
    body = scrub.text(text).encode("utf-8")
    return iter([body]), len(body)


def _chunks(fd: int) -> Iterator[bytes]:
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(65536):
            yield chunk
