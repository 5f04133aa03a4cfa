"""``GET /v1/history``, ``GET /v1/lessons`` and ``DELETE /v1/history``: seed 003's execution
history, learning context and "clear history", over the service.

Where each answer comes from, and who sees it:

- **History** is the service store's ended runs (passed, failed, no-go, error, cancelled), newest
  first, each with its outcome, attempts and failure kinds (from the run's summary.json).
  Tenancy as for ``/v1/runs``: a token sees its own runs, an admin everyone's. CLI runs are
  not in it (the run history behind ``/metrics`` and the dashboard has them).
- **Lessons** are what the agents themselves read before a run (:mod:`agents.lessons`,
  ``runs/lessons.sqlite``): failure patterns counted per kind, and the lessons (recommended
  fixes) the next run on the target is given, rendered as that run's ``lessons.md``. They are
  kept per agent and target (for the blueprint agent: per workflow) and are **shared**: every
  tenant's runs on a target learn from, and add to, the same lessons, so every authenticated
  caller may read them. They hold lesson sentences and failure kinds, never a run's files.
- **Forgetting** (``DELETE /v1/history?target=``, admin only, 403 otherwise) deletes the
  target's lessons (runs and failures in lessons.sqlite, so the next run starts with none) and
  the target's *ended* rows in the service store (so they leave ``/v1/history``, ``/v1/runs``
  and ``/v1/stats``), and what those runs kept of their uploads (``runs/<id>/kept/``: the code a
  check checked, an uploaded target's result.csv), which counted against their owners' upload
  quota. Kept: the rest of the run folders under ``runs/`` (artefacts, checkpoints, events), runs
  still queued, running or waiting, and ``history.sqlite``, whose counters feed Prometheus and
  must never go down (a counter that decreases reads as a reset to ``increase()``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from agents.lessons import DEFAULT_LIMIT, ExecutionHistory, lessons_markdown
from agents.registry import AGENTS
from controller.entry.service.auth import Caller
from controller.entry.service.problems import Problem
from controller.entry.service.schemas import PROBLEMS
from controller.entry.service.state import ServiceState, state_of
from controller.platform.shared_state import lessons_of
from controller.platform.store import TERMINAL, RunRow
from controller.runner.dispatch import remove_kept

router = APIRouter(prefix="/v1", tags=["history"], responses=PROBLEMS)
#: Most failure kinds one history entry lists (a summary is our own file, but bounded all the same).
MAX_KINDS = 50


class HistoryEntry(BaseModel):
    """One ended run: how it went (seed 003's execution_history row)."""

    id: str
    owner: str
    agent: str
    target: str
    status: str = Field(description=f"One of {', '.join(sorted(TERMINAL))}.")
    attempts: int | None = Field(description="Attempts (turns, for intake) the run made; null if it never started.")
    max_attempts: int | None
    failures: list[str] = Field(description="The failure kind of each failed attempt, in order.")
    coder: str | None
    created_at: float
    finished_at: float | None
    duration_seconds: float | None = Field(description="From its start to its end, as the service saw it.")
    error: str = Field(description="Why it ended in error, no-go or was cancelled, in one line.")

    @classmethod
    def of(cls, row: RunRow) -> HistoryEntry:
        """The entry of an ended run row."""
        summary: dict[str, Any] = row.summary or {}
        failures = summary.get("failures")
        duration = (row.finished_at - row.started_at
                    if row.finished_at is not None and row.started_at is not None else None)
        return cls(id=row.id, owner=row.owner, agent=row.agent, target=row.target, status=row.status,
                   attempts=_int(summary.get("attempts")), max_attempts=_int(summary.get("max_attempts")),
                   failures=[str(kind)[:64] for kind in failures[:MAX_KINDS]] if isinstance(failures, list) else [],
                   coder=str(summary["coder"])[:64] if isinstance(summary.get("coder"), str) else None,
                   created_at=row.created_at, finished_at=row.finished_at, duration_seconds=duration, error=row.error)


class History(BaseModel):
    """One page of the execution history, newest first."""

    runs: list[HistoryEntry]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null on the last.")


class Pattern(BaseModel):
    """Failures of one kind on the target (seed 003's failure_patterns)."""

    kind: str
    attempts: int = Field(description="Failed attempts of this kind.")
    runs: int = Field(description="Runs with at least one.")
    fixed_runs: int = Field(description="Of those, runs a later attempt fixed.")
    last_seen: float


class LessonOut(BaseModel):
    """A lesson (recommended fix) the next run on the target is given."""

    text: str
    kind: str
    seen: int
    last_seen: float
    fixed_by: str = Field(description="The attempt that once fixed it; empty if none did.")


class Lessons(BaseModel):
    """The learning context of an agent on a target (seed 003's /learning/{workflow})."""

    agent: str
    target: str
    runs: dict[str, int] = Field(description="Runs the lessons store recorded, per status (all tenants, CLI too).")
    failure_patterns: list[Pattern]
    lessons: list[LessonOut] = Field(description=f"What the next run is given: at most {DEFAULT_LIMIT}, newest first.")
    lessons_markdown: str = Field(description="The same, as the next run's lessons.md.")


class Forgotten(BaseModel):
    """What ``DELETE /v1/history`` removed, and what it keeps."""

    target: str
    agent: str | None
    lessons_runs: int = Field(description="Runs deleted from the lessons store.")
    lessons_failures: int = Field(description="Failures (with their lessons) deleted from the lessons store.")
    service_runs: int = Field(description="Ended runs deleted from the service's store.")
    kept: list[str]


KEPT = ["run folders under runs/ (artefacts, checkpoints, events; not what they kept of their uploads)",
        "runs still queued, running or waiting",
        "the run history behind /metrics and the dashboard (history.sqlite): its counters never go down"]
Agent = Annotated[str | None, Query(max_length=64, description="Only this agent's runs.")]


def _lessons_store(state: ServiceState) -> ExecutionHistory:
    """The lessons the agents read and write: the store's on PostgreSQL, else the runs folder's file."""
    return lessons_of(state.settings, state.store)


@router.get("/history", response_model=History, summary="Ended runs with outcome, attempts and failure kinds")
def get_history(request: Request, caller: Caller, agent: Agent = None,
                target: Annotated[str | None, Query(max_length=128)] = None,
                limit: Annotated[int, Query(ge=1, le=100)] = 20,
                cursor: Annotated[str | None, Query(max_length=20)] = None) -> History:
    """The caller's ended runs (an admin: everyone's), newest first, paginated."""
    page = state_of(request).store.history(owner=None if caller.admin else caller.name, agent=agent, target=target,
                                         limit=limit, cursor=cursor)
    return History(runs=[HistoryEntry.of(row) for row in page.runs], next_cursor=page.cursor)


@router.get("/lessons", response_model=Lessons, summary="Failure patterns and the lessons the next run is given")
def get_lessons(request: Request, caller: Caller,
                agent: Annotated[str, Query(max_length=64, description="The agent (bank_parser, blueprint, …).")],
                target: Annotated[str, Query(min_length=1, max_length=128,
                                             description="The target; for the blueprint agent its workflow.")]
                ) -> Lessons:
    """The learning context the agents read, shared by every tenant (see the module doc)."""
    if agent not in AGENTS:
        raise Problem(422, f"unknown agent {agent[:64]!r} (known agents: {', '.join(sorted(AGENTS))})")
    store = _lessons_store(state_of(request))
    lessons = store.lessons(agent, target)
    return Lessons(
        agent=agent, target=target, runs=store.outcomes(agent, target),
        failure_patterns=[Pattern(kind=p.kind, attempts=p.attempts, runs=p.runs, fixed_runs=p.fixed,
                                  last_seen=p.last_seen) for p in store.patterns(agent, target)],
        lessons=[LessonOut(text=les.text, kind=les.kind, seen=les.seen, last_seen=les.last_seen,
                           fixed_by=les.fixed_by) for les in lessons],
        lessons_markdown=lessons_markdown(agent, target, lessons),
    )


ADMIN_ONLY = "only an admin token may delete history"


@router.delete("/history", response_model=Forgotten, summary="Forget a target's lessons and ended runs (admin)",
               responses={403: PROBLEMS[401] | {"description": "Not an admin token"}})
def delete_history(request: Request, caller: Caller,
                   target: Annotated[str, Query(min_length=1, max_length=128,
                                                description="The target (for the blueprint agent: its workflow).")],
                   agent: Agent = None) -> Forgotten:
    """Delete the target's lessons and its ended service runs; run folders and metrics stay."""
    if not caller.admin:
        raise Problem(403, ADMIN_ONLY)
    state = state_of(request)
    lessons = _lessons_store(state).forget(target, agent)
    forgotten = state.store.forget(target=target, agent=agent)
    remove_kept(state.settings, forgotten)  # what their pages kept of their uploads (issue 43)
    return Forgotten(target=target, agent=agent, lessons_runs=lessons.runs, lessons_failures=lessons.failures,
                     service_runs=len(forgotten), kept=KEPT)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
