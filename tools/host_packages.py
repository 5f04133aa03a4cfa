"""``make test``'s first step: the host programs some tests drive, installed if missing.

Most tests need only Python and the Docker engine (Tesseract runs in the sandbox images, as in
production). A few drive a program on the host: the statement probe's OCR unit test
(Tesseract), the PostgreSQL store's tests (a throwaway server from Debian's postgresql) and
the console's browser tests (Debian's Chromium; ``playwright install`` cannot work offline) and
the console's graph layout (Graphviz's ``dot``; without it the console falls back to grandalf).
As root on a machine with apt-get, the missing ones are installed, in one line saying which
(as ``make run`` installs debootstrap); elsewhere one line names them, and the tests that
need them skip, or fail when ``CI=true``. Always exits 0: the tests report what is missing.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.platform import apt

#: Debian's Chromium, the one browser the console's tests drive.
CHROMIUM = "/usr/bin/chromium"


def postgres_binary(name: str) -> str | None:
    """A PostgreSQL server program (initdb, pg_ctl): on PATH, or Debian's versioned folder."""
    return shutil.which(name) or (sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [None])[-1]


@dataclass(frozen=True)
class HostProgram:
    """A program some tests drive on the host, and the Debian packages that provide it."""

    name: str
    packages: tuple[str, ...]
    used_by: str
    present: Callable[[], bool]


PROGRAMS = (
    HostProgram("tesseract", ("tesseract-ocr", "tesseract-ocr-eng"), "the probe's OCR unit test",
                lambda: shutil.which("tesseract") is not None),
    HostProgram("postgresql", ("postgresql",), "the PostgreSQL store's tests",
                lambda: postgres_binary("initdb") is not None),
    HostProgram("chromium", ("chromium",), "the console's browser tests", lambda: Path(CHROMIUM).exists()),
    HostProgram("dot", ("graphviz",), "the console's graph layout and its tests",
                lambda: shutil.which("dot") is not None),
)


def main() -> int:
    """Install what is missing if this host can; otherwise say what will skip."""
    missing = [program for program in PROGRAMS if not program.present()]
    if not missing:
        return 0
    packages = [package for program in missing for package in program.packages]
    uses = "; ".join(program.used_by for program in missing)
    if not apt.can_install():
        print(f"==> not installed: {' '.join(packages)} ({uses} skip; as root on Debian make test installs them)")
        return 0
    print(f"==> installing {' '.join(packages)} with apt-get ({uses})")
    for command in apt.install_commands(packages):
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            print(f"==> apt-get failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
