"""A target's page: its success rate over time and the attempts its runs needed, per agent (the
main panels of the Grafana dashboard, drawn from the run history), its failure kinds, and the
lessons the next run will be given.

Success is the dashboard's: runs that ended ``passed`` or ``self-consistent`` over those and
the ``failed`` ones (``error`` is the machine's fault, ``unverified`` no verdict and ``no-go``
the agent's decision that its inputs cannot support the work: all left out; agents.ports.status). The history holds every run, CLI and service alike; it is shared by every tenant, as
the lessons are (docs/api.md), and holds no run's files.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from markupsafe import Markup

from agents.ports import status as statuses
from agents.lessons import ExecutionHistory, FailurePattern, Lesson, lessons_markdown
from controller.entry.console.views.charts import Series, bar_chart, line_chart
from controller.platform.observability.history import HistoryStore

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


def target_view(history: HistoryStore, lessons: ExecutionHistory, agent: str, target: str) -> TargetView:
    """The page of ``agent`` on ``target``."""
    runs = history.target_runs(agent, target)
    points = daily_rates(runs)
    needed = attempts_needed(runs)
    failures = list(history.target_failures(agent, target).items())
    given = lessons.lessons(agent, target)
    return TargetView(
        agent=agent, target=target, runs=len(runs), rate=rate(runs), rate_points=points,
        rate_chart=line_chart(f"success rate of {agent} on {target} per day",
                              [Series(agent, tuple((day, r) for day, r, _ in points))]),
        attempts=needed, attempts_chart=bar_chart(f"attempts needed by successful runs of {agent} on {target}", needed),
        failures=failures, failures_chart=bar_chart(f"failed attempts by kind, {agent} on {target}", failures[:12]),
        patterns=lessons.patterns(agent, target), lessons=given, lessons_markdown=lessons_markdown(agent, target, given),
    )
