"""The ``/v1/checks`` documents (they make part of /openapi.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.ports.environments import parse_as_of
from controller.entry.service.schemas import RunCore
from controller.platform.store import RunRow

Verdict = Literal["pass", "self-consistent", "fail", "unverified"]


class CheckRequest(BaseModel):
    """A check's text fields (the CLI's ``check`` options)."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$",
                        description="A target of the service's data/, or the name of the uploaded one.")
    as_of: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                              description="Resolve submissions' unpinned requirements as of this date.")
    jobs: int | None = Field(None, ge=1, le=16, description="Artefacts checked at once.")

    @field_validator("as_of")
    @classmethod
    def _a_date(cls, value: str | None) -> str | None:
        if value is not None:
            parse_as_of(value)  # the child's own check, here: a bad date is 422, not a failed check
        return value


class CheckVerdictOut(BaseModel):
    """One parser's or submission's verdict."""

    name: str = Field(description="The parser's file name, or the submission's folder (a zip's name).")
    status: Verdict
    rows: int | None = Field(description="Rows the parser returned; null when it returned none.")
    seconds: float = Field(description="Seconds in sandboxes.")
    first_difference: str = Field(description="The first thing wrong, in a few words; empty when it passed.")


class CheckSummary(BaseModel):
    """The check's summary.json: counts and each artefact's verdict."""

    status: Literal["passed", "failed"] = Field(description="passed: none failed (the CLI's exit 0).")
    passed: int
    failed: int
    unverified: int
    verdicts: list[CheckVerdictOut]


class CheckLinks(BaseModel):
    """Where to follow a check (events, artefacts and cancel are the run endpoints)."""

    self: str
    events: str
    artefacts: str
    cancel: str


class CheckOut(RunCore):
    """A check as the service has it; ``summary`` once it ended with verdicts."""

    created_at: float
    started_at: float | None
    finished_at: float | None
    exit_code: int | None = Field(description="What `python -m controller check` exited with.")
    summary: CheckSummary | None
    error: str = Field(description="Why the check ended in error or was cancelled, in one line.")
    links: CheckLinks

    @classmethod
    def of(cls, row: RunRow) -> CheckOut:
        """The document of the check ``row``."""
        run = f"/v1/runs/{row.id}"
        return cls(id=row.id, owner=row.owner, agent=row.agent, target=row.target, options=row.options,
                   status=row.status, created_at=row.created_at, started_at=row.started_at,
                   finished_at=row.finished_at, exit_code=row.exit_code, summary=_summary(row.summary),
                   error=row.error, links=CheckLinks(self=f"/v1/checks/{row.id}", events=f"{run}/events",
                                                     artefacts=f"{run}/artefacts", cancel=f"{run}/cancel"))


def _summary(data: dict[str, Any] | None) -> CheckSummary | None:
    """The summary if it is a check's (a child that died early left none, or a foreign one)."""
    if data is None:
        return None
    try:
        return CheckSummary.model_validate(data, strict=False)
    except ValidationError:
        return None

