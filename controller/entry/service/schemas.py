"""The service's request and response documents (they make /openapi.json)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from controller.platform.store import RunRow, RunStatus

Coder = Literal["offline", "gemini", "openai", "ollama"]


class RunRequest(BaseModel):
    """Start a loop on a named target of the service's data folder (the CLI's ``run --target``)."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1, max_length=128, description="Folder name under the service's data/.")
    agent: str | None = Field(None, max_length=64, description="The target's agent; default: its target.toml's.")
    # Strict: "3", true and 2.0 are refused in JSON (issue 42: they were taken, true as 1 attempt);
    # a multipart form's text is made a number by form_fields first.
    max_attempts: StrictInt | None = Field(None, ge=1, le=50, description="Attempts before giving up.")
    coder: Coder | None = Field(None, description="Who writes the code; default: the service's SBX_CODER.")
    interactive: bool = Field(False, description="Conversational targets (intake): take each reply from "
                              "POST /v1/runs/{id}/input instead of the target's replies.txt; the run waits "
                              "(status waiting) for each.")
    subject: str | None = Field(None, min_length=1, max_length=80,
                                description="Conversational targets (intake): the person talked to; their graph "
                                "memory persists across runs (run --subject).")


def form_fields(fields: Mapping[str, str]) -> dict[str, Any]:
    """A multipart form's text fields as a JSON body would carry them: ``max_attempts`` written in
    plain digits becomes a number (anything else stays text, which the model then refuses)."""
    out: dict[str, Any] = dict(fields)
    attempts = out.get("max_attempts")
    if isinstance(attempts, str) and attempts.isascii() and attempts.isdigit() and len(attempts) <= 3:
        out["max_attempts"] = int(attempts)
    return out


class RunLinks(BaseModel):
    """Where to follow a run."""

    self: str
    events: str
    artefacts: str
    cancel: str
    resume: str


class RunCore(BaseModel):
    """What every run row's document starts with (a run's, a check's)."""

    id: str
    owner: str
    agent: str
    target: str
    options: dict[str, Any]
    status: RunStatus


class RunOut(RunCore):
    """A run as the service has it; ``summary`` is the run's summary.json once it ended."""

    cancel_requested: bool
    takeovers: int = Field(description="How often a worker that died handed this run on.")
    created_at: float
    started_at: float | None
    finished_at: float | None
    exit_code: int | None = Field(description="What `python -m controller run` exited with.")
    summary: dict[str, Any] | None
    error: str = Field(description="Why the run ended in error or no-go (the agent's reason), or was cancelled, "
                                   "in one line.")
    links: RunLinks

    @classmethod
    def of(cls, row: RunRow) -> RunOut:
        """The document of ``row``."""
        base = f"/v1/runs/{row.id}"
        return cls(
            id=row.id, owner=row.owner, agent=row.agent, target=row.target, options=row.options,
            status=row.status, cancel_requested=row.cancel_requested, takeovers=row.takeovers,
            created_at=row.created_at, started_at=row.started_at, finished_at=row.finished_at,
            exit_code=row.exit_code, summary=row.summary, error=row.error,
            links=RunLinks(self=base, events=f"{base}/events", artefacts=f"{base}/artefacts",
                           cancel=f"{base}/cancel", resume=f"{base}/resume"),
        )


class RunList(BaseModel):
    """One page of runs, newest first."""

    runs: list[RunOut]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null on the last.")


class TargetStats(BaseModel):
    """How one agent's runs on one target went, through this service."""

    agent: str
    target: str
    runs: dict[str, int] = Field(description="Runs per status.")
    success_rate: float | None = Field(
        description="passed / (passed + failed); runs that ended in error (the machine, not the agent) "
        "or no-go (the agent's decision that its inputs cannot support the work) or were cancelled are "
        "not counted; null before any verdict.")


class Stats(BaseModel):
    """Success rates per agent and target (the caller's runs; an admin's: everyone's)."""

    targets: list[TargetStats]


class ArtefactEntry(BaseModel):
    """A file in a run's folder."""

    path: str
    bytes: int


class Problem(BaseModel):
    """RFC 9457 problem details (application/problem+json)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str


PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "description": text, "content": {"application/problem+json": {}}}
    for code, text in ((400, "A malformed multipart body (e.g. too many parts)"), (401, "No or a bad bearer token"),
                       (404, "No such run (or not yours)"),
                       (409, "The run has ended already"), (413, "The request is too large"),
                       (422, "The request is not valid"), (429, "Your quota of queued and running runs is used"),
                       (503, "Draining, the queue is full, or the store is unreachable"))
}
