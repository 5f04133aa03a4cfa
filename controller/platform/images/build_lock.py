"""One builder at a time per image, base or wheelhouse, across processes on this host.

Two processes that find an image missing at once (two ``make run`` on a fresh machine, the
workers of a parallel ``make test``) would both bootstrap the base and download the same wheels
into one folder, the second overwriting files the first is copying. The first takes the lock and
builds; the others wait, say so once, and then find the thing built.
"""

from __future__ import annotations

import fcntl
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def lock_path(cache_dir: Path, name: str) -> Path:
    """The lock file for ``name`` (an image tag or a wheelhouse key) under ``cache_dir``."""
    return cache_dir / "locks" / (re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:120] + ".lock")


@contextmanager
def building(path: Path, say: Callable[[str], None], what: str) -> Iterator[None]:
    """Hold the exclusive lock at ``path`` (an advisory flock, released when the process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another process that is building {what}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
