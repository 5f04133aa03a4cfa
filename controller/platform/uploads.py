"""Where the service keeps what a client uploaded for a run: ``runs/uploads/<run id>/``.

The HTTP side writes there (it stages an upload and renames it into place) and the engine reads
there (a run's child is given it as its data folder; housekeeping removes it), so the name is
kept below both.
"""

from __future__ import annotations

from pathlib import Path

from controller.platform.settings import Settings

UPLOADS = "uploads"


def upload_dir(settings: Settings, run_id: str) -> Path:
    """Where an uploaded run's target folder lives: ``runs/uploads/<run id>/<target>/``."""
    return settings.runs_dir / UPLOADS / run_id
