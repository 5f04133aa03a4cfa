"""A run's files, served without ever leaving its folder.

A requested path is checked by its parts (no empty, ``.``, ``..``, absolute or backslash
part, no NUL), then walked one component at a time with ``lstat`` so that no symlink is
followed anywhere on the way, and the final file is opened with ``O_NOFOLLOW``; the
resolved path must still lie inside the run folder. Anything else is 404.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from controller.entry.service.problems import Problem

MAX_PATH = 512
MAX_LISTED = 2000


def _not_found(relative: str) -> Problem:
    return Problem(404, f"no artefact {relative[:200]!r} in this run")


def safe_file(run_dir: Path, relative: str) -> Path:
    """The regular file ``relative`` inside ``run_dir``.

    Raises:
        Problem: 404 for anything that is not a regular file reached without a symlink inside it.
    """
    parts = relative.split("/")
    if (not relative or len(relative) > MAX_PATH or "\x00" in relative or "\\" in relative
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
            if stat.S_ISREG(info.st_mode):
                found.append((path.relative_to(run_dir).as_posix(), info.st_size))
            if len(found) >= MAX_LISTED:
                return found
    return found
