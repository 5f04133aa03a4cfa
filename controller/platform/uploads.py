"""Where the service keeps what a client uploaded for a run: ``runs/uploads/<run id>/``, and
what of it is kept with the run once the run ended: ``runs/<run id>/kept/``.

The HTTP side writes there (it stages an upload and renames it into place) and the engine reads
there (a run's child is given it as its data folder; housekeeping keeps what the run's pages
need and removes the rest), so the names are kept below both.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from controller.platform.settings import Settings

UPLOADS = "uploads"
#: The folder of a run that keeps, after its end, what its pages read from its upload (same layout).
KEPT = "kept"


def upload_dir(settings: Settings, run_id: str) -> Path:
    """Where an uploaded run's target folder lives: ``runs/uploads/<run id>/<target>/``."""
    return settings.runs_dir / UPLOADS / run_id


def kept_dir(settings: Settings, run_id: str) -> Path:
    """What an ended run kept of its upload: ``runs/<run id>/kept/`` (laid out as the upload was)."""
    return settings.runs_dir / run_id / KEPT


def regular_size(path: Path) -> int | None:
    """The size of ``path`` if it is a regular file (a link is not followed), else None."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def tree_bytes(root: Path) -> int:
    """Bytes of the regular files under ``root`` (links are neither followed nor counted)."""
    return sum(regular_size(Path(folder) / name) or 0
               for folder, _, files in os.walk(root, followlinks=False) for name in files)
