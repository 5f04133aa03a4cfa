"""What the console's routes share: the viewer dependency and the run a viewer may see."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from fastapi import Path as PathParam

from controller.entry.console.viewer import state_of, viewer
from controller.entry.service.auth import Principal
from controller.entry.service.routes import visible_run
from controller.platform.store import RunRow

Viewer = Annotated[Principal, Depends(viewer)]
RunId = Annotated[str, PathParam(min_length=1, max_length=128)]


def run_of(request: Request, who: Principal, run_id: str) -> tuple[RunRow, Path]:
    """The run ``run_id`` and its folder, if ``who`` may see it (404 alike for absent and another tenant's).

    Raises:
        Problem: 404.
    """
    state = state_of(request)
    row = visible_run(state, who, run_id)
    return row, state.settings.runs_dir / row.id
