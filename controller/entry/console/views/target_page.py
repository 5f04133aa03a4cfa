"""A target's page: its success rate over time and the attempts its runs needed, per agent (the
main panels of the Grafana dashboard, drawn from the run history), its failure kinds, and the
lessons the next run will be given.

Success is the dashboard's: runs that ended ``passed`` or ``self-consistent`` over those and
the ``failed`` ones (``error`` is the machine's fault, ``unverified`` no verdict and ``no-go``
the agent's decision that its inputs cannot support the work: all left out; agents.ports.status).

Tenancy: the counts are the viewer's own, as on ``/targets``. An admin (and the local mode) sees
the run history, which holds every run, CLI and service alike; a token's viewer sees only its
own ended runs in the store (:func:`own_runs`), so no page counts another tenant's runs. The
lessons are shared by every tenant (docs/api.md), their texts shown to all; the lessons store's
per-kind run counts are everyone's, so only admins see them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from markupsafe import Markup

from agents.lessons import ExecutionHistory, FailurePattern, Lesson, lessons_markdown
from agents.ports import status as statuses
from controller.entry.console.views.charts import Series, bar_chart, line_chart
from controller.platform.observability.history import HistoryStore
from controller.platform.store import RunRow, RunStore

#: The most runs of one viewer read for a target's page (the history's own limit).
MAX_RUNS = 10_000
PAGE = 500
SUCCESS = statuses.SUCCESS
VERDICTS = statuses.SUCCESS | statuses.FAILURE
DAY = 86400.0


@dataclass(frozen=True)
class TargetView:
    """What the target page shows."""

    agent: str
    target: str
    runs: int
    rate: float | None
    rate_points: list[tuple[float, float, int]]
    rate_chart: Markup
    attempts: list[tuple[str, int]]
    attempts_chart: Markup
    failures: list[tuple[str, int]]
    failures_chart: Markup
    patterns: list[FailurePattern]
    lessons: list[Lesson]
    lessons_markdown: str
    #: Whether the counts are everyone's (an admin's view of the run history) or the viewer's own runs.
    everyone: bool = True


def daily_rates(runs: list[tuple[float, str, int]]) -> list[tuple[float, float, int]]:
    """(day start, success rate, verdicts) per day that had a verdict."""
    days: dict[float, list[bool]] = defaultdict(list)
    for finished, status, _ in runs:
        if status in VERDICTS:
            days[finished - finished % DAY].append(status in SUCCESS)
    return [(day, sum(v) / len(v), len(v)) for day, v in sorted(days.items())]


def attempts_needed(runs: list[tuple[float, str, int]]) -> list[tuple[str, int]]:
    """How many successful runs needed 1, 2, … attempts."""
    counts = Counter(attempts for _, status, attempts in runs if status in SUCCESS)
    return [(str(n), counts[n]) for n in sorted(counts)]


def rate(runs: list[tuple[float, str, int]]) -> float | None:
    """The success rate over every recorded verdict."""
    verdicts = [status in SUCCESS for _, status, _ in runs if status in VERDICTS]
    return sum(verdicts) / len(verdicts) if verdicts else None


def own_runs(store: RunStore, owner: str, agent: str,
             target: str) -> tuple[list[tuple[float, str, int]], dict[str, int]]:
    """(finished_at, status, attempts) of ``owner``'s ended runs of ``agent`` on ``target``, oldest first,
    and their failed attempts per reason (from each run's summary)."""
    found: list[RunRow] = []
    cursor: str | None = None
    while len(found) < MAX_RUNS:
        page = store.history(owner=owner, agent=agent, target=target, limit=PAGE, cursor=cursor)
        found += page.runs
        if page.cursor is None:
            break
        cursor = page.cursor
    runs: list[tuple[float, str, int]] = []
    failures = Counter[str]()
    for row in reversed(found[:MAX_RUNS]):
        summary = row.summary or {}
        attempts = summary.get("attempts")
        runs.append((row.finished_at or row.created_at, row.status, attempts if isinstance(attempts, int) else 0))
        reasons = summary.get("failures")
        if isinstance(reasons, list):
            failures.update(r[:64] for r in reasons if isinstance(r, str))
    return runs, dict(failures.most_common())


def target_view(history: HistoryStore, lessons: ExecutionHistory, agent: str, target: str,
                own: tuple[list[tuple[float, str, int]], dict[str, int]] | None = None) -> TargetView:
    """The page of ``agent`` on ``target``: of the whole history, or of ``own`` (a viewer's runs and failures)."""
    runs = history.target_runs(agent, target) if own is None else own[0]
    points = daily_rates(runs)
    needed = attempts_needed(runs)
    failures = list((history.target_failures(agent, target) if own is None else own[1]).items())
    given = lessons.lessons(agent, target)
    return TargetView(
        agent=agent, target=target, runs=len(runs), rate=rate(runs), rate_points=points,
        rate_chart=line_chart(f"success rate of {agent} on {target} per day",
                              [Series(agent, tuple((day, r) for day, r, _ in points))]),
        attempts=needed, attempts_chart=bar_chart(f"attempts needed by successful runs of {agent} on {target}", needed),
        failures=failures, failures_chart=bar_chart(f"failed attempts by kind, {agent} on {target}", failures[:12]),
        patterns=lessons.patterns(agent, target) if own is None else [], lessons=given,
        lessons_markdown=lessons_markdown(agent, target, given), everyone=own is None,
    )
