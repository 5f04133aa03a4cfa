"""``/subjects/{name}``: what the memory holds about one of the viewer's subjects (issue 40): each
node's facts, every field's history with the words each value was read from, and the conflicts.
Another tenant's subject is 404, as over the API (:mod:`controller.entry.service.subjects`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from controller.entry.console.routes.deps import Viewer
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.service.subjects import subject_memory

router = APIRouter()
SubjectName = Annotated[str, Path(min_length=1, max_length=80)]


@router.get("/subjects/{name}")
def subject_page(name: SubjectName, request: Request, who: Viewer) -> Response:
    """The subject's facts, history and conflicts."""
    memory = subject_memory(state_of(request).settings, who, name)  # a Problem is the console's error page too
    return page(request, "subject.html", title=f"Subject {name}", viewer=who, memory=memory)
