"""``GET /v1/subjects/{name}`` and ``DELETE /v1/subjects/{name}``: a person's graph memory, within reach
(issue 40), and each tenant's subjects kept apart.

A subject named over the service belongs to the tenant that names it: the service keys its memory
by the name **and the caller's token name** (:func:`scoped`, ``"Maria Silva @alice"``), so two
tenants who both talk to a "Maria Silva" have two memories, and neither can read or erase the
other's: another tenant's subject answers 404, exactly like a subject nobody has. (A run that takes
its subject from its target's ``target.toml`` rather than from the request is not scoped.)

- ``GET`` returns the subject's facts (each node's current values), every field's history (value,
  when, where from, the words and reasoning, the time it was about) and the conflicts.
- ``DELETE`` erases everything the memory holds about the subject (fields, history, conflicts,
  the conversations' record) and appends one line to the service's audit log
  (``runs/audit.jsonl``: when, who, what; the subject by its key, a hash, never by its name: an
  erased person's name is not kept). Run folders (transcripts) are the runs', and stay.
"""

from __future__ import annotations

import json
import time
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, Field

from agents.ports.errors import ConfigError
from agents.ports.memory import check_subject, subject_key
from controller.entry.service.auth import Caller, Principal
from controller.entry.service.problems import Problem
from controller.entry.service.schemas import PROBLEMS, RunRequest
from controller.entry.service.state import state_of
from controller.platform.memory_sql import memory_stores
from controller.platform.settings import Settings

router = APIRouter(prefix="/v1", tags=["subjects"], responses=PROBLEMS)
Name = Annotated[str, PathParam(min_length=1, max_length=80, description="The subject's name, as submitted.")]
AUDIT_FILE = "audit.jsonl"
#: Most history entries returned per field (the newest).
MAX_HISTORY = 200


def scoped(owner: str, name: str) -> str:
    """The memory's name of subject ``name`` of tenant ``owner``.

    Raises:
        ConfigError: not a subject name, or too long once the tenant's name is added (422).
    """
    check_subject(name)
    return check_subject(f"{name} @{owner}")


def scoped_request(owner: str, request: RunRequest) -> RunRequest:
    """``request`` with its subject scoped to ``owner`` (unchanged without a subject)."""
    if request.subject is None:
        return request
    return request.model_copy(update={"subject": scoped(owner, request.subject)})


class SubjectMemory(BaseModel):
    """What the memory holds about a subject."""

    subject: str
    nodes: dict[str, dict[str, Any]] = Field(description="Each node's current values (null: skipped).")
    history: dict[str, list[dict[str, Any]]] = Field(description="Per Node.field, every value given, oldest first.")
    conflicts: list[dict[str, Any]]
    runs: list[str] = Field(description="The conversations that wrote it, oldest first.")


class Erased(BaseModel):
    """What ``DELETE`` did."""

    subject: str
    erased: bool


def _memory_name(caller: Principal, name: str) -> str:
    try:
        return scoped(caller.name, name)
    except ConfigError as exc:
        raise Problem(422, exc.message) from None


@router.get("/subjects/{name}", response_model=SubjectMemory, summary="A subject's facts, history and conflicts")
def get_subject(request: Request, caller: Caller, name: Name) -> SubjectMemory:
    """The caller's subject ``name``: 404 if the caller has none of that name."""
    return subject_memory(state_of(request).settings, caller, name)


def subject_memory(settings: Settings, caller: Principal, name: str) -> SubjectMemory:
    """What the memory holds about ``caller``'s subject ``name`` (the API's and the console's).

    Raises:
        Problem: 404 when the caller has no such subject, 422 for a bad name.
    """
    stores = memory_stores(settings)
    key = _memory_name(caller, name)
    if not stores.has_subject(key):
        raise Problem(404, f"no subject {name!r}")
    with closing(stores.for_subject(key)) as store:
        view = store.view()
    return SubjectMemory(
        subject=name, nodes=view.values(),
        history={f"{node.name}.{f.name}": [asdict(change) for change in f.history[-MAX_HISTORY:]]
                 for node in view.nodes for f in node.fields},
        conflicts=[asdict(c) for c in view.conflicts], runs=list(view.runs))


@router.delete("/subjects/{name}", response_model=Erased, summary="Erase everything about a subject (audited)")
def delete_subject(request: Request, caller: Caller, name: Name) -> Erased:
    """Erase the caller's subject ``name``; the audit log records it (by key). 404 if there is none."""
    state = state_of(request)
    key = _memory_name(caller, name)
    if not memory_stores(state.settings).forget_subject(key):
        raise Problem(404, f"no subject {name!r}")
    audit(state.settings.runs_dir, {"action": "subject.erase", "by": caller.name, "subject_key": subject_key(key)})
    return Erased(subject=name, erased=True)


def audit(runs_dir: Path, entry: dict[str, Any]) -> None:
    """Append one line to the service's audit log (one JSON object per line, with its time)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"at": time.time(), **entry}, sort_keys=True)
    with (runs_dir / AUDIT_FILE).open("a", encoding="utf-8") as log:
        log.write(line + "\n")
