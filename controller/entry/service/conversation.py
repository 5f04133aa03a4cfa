"""``POST /v1/runs/{id}/input``: the next reply of a conversation (intake) run that waits for it.

A run submitted with ``interactive`` takes its replies from the service. With none for its
question it stops, checkpointed, and its row is ``waiting`` (no worker, no lease, nothing
expires; a restarted service finds it as it was). The question is the ``question`` event of
the run's stream (and its ``question.json`` artefact). A reply is stored in the run folder
(``replies/<turn>.txt``, written whole, once per turn: :mod:`agents.ports.replies`) and the
run is queued again; a worker resumes it from its checkpoint with that reply.

A reply to a run that is not waiting is 409; another tenant's run is 404, like one that
does not exist.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from agents.ports.replies import MAX_REPLY_CHARS, read_question, write_reply
from controller.entry.service.auth import Caller
from controller.entry.service.problems import Problem
from controller.entry.service.routes import RunId, visible_run
from controller.entry.service.schemas import PROBLEMS, RunOut
from controller.entry.service.state import ServiceState, state_of

router = APIRouter(prefix="/v1/runs", tags=["runs"], responses=PROBLEMS)


class ReplyIn(BaseModel):
    """The reply to the question the run waits on."""

    model_config = ConfigDict(extra="forbid")

    reply: str = Field(min_length=1, max_length=MAX_REPLY_CHARS,
                       description="What the user answers; one line (line breaks become spaces).")


@router.post("/{run_id}/input", status_code=202, response_model=RunOut, summary="Reply to a waiting run's question")
def send_input(run_id: RunId, body: ReplyIn, request: Request, caller: Caller) -> RunOut:
    """Store the reply to the question a ``waiting`` run asked and queue the run to continue with it."""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    if row.status != "waiting":
        raise Problem(409, f"run {run_id} is {row.status}, not waiting for a reply")
    run_dir = state.settings.runs_dir / row.id
    pending = read_question(run_dir)
    if pending is None:
        raise Problem(409, f"run {run_id} waits but its question.json is missing or unreadable; resume it")
    if not write_reply(run_dir, pending.turn, body.reply):
        # An earlier reply to this turn was stored, but its run was not queued (that request died
        # in between): queue it now, with the reply that came first.
        _queue(state, row.id)
        raise Problem(409, f"reply {pending.turn} of run {run_id} was sent already; the run continues with it")
    after = _queue(state, row.id)
    if after is None:
        raise Problem(409, f"run {run_id} changed meanwhile; see GET /v1/runs/{run_id}")
    return after


def _queue(state: ServiceState, run_id: str) -> RunOut | None:
    row = state.store.answer(run_id)
    if row is None:
        return None
    state.submitted.set()  # an idle worker of this process claims it at once
    return RunOut.of(row)
