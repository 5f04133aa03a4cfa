"""The parts of a run page that belong to one kind of agent, as the agent declares them: a run
with a memory shows its conversation and memory; one with :class:`~agents.base.RunSections` its
report, verdicts per attempt, role steps and the lessons it was given (a blueprint run's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from agents.base import RunSections
from agents.ports.replies import PendingQuestion, read_question
from controller.entry.console.views.attempts import attempt_numbers, read_json, read_text
from controller.entry.console.views.intake_memory import IntakeMemory, read_intake_memory
from controller.entry.console.views.markdown import markdown_html
from controller.entry.console.views.nodes import NodeEnd
from controller.platform.settings import Settings
from controller.platform.store import RunRow


@dataclass(frozen=True)
class IntakeView:
    """The conversation so far, the question the run waits on (if it waits), and the memory."""

    memory: IntakeMemory
    pending: PendingQuestion | None


@dataclass(frozen=True)
class SectionsView:
    """An agent's own sections, each present only if it declares it: the report (rendered,
    sanitised), the verdict per attempt, the role steps, the lessons given."""

    declared: RunSections
    report: Markup
    report_attempt: int | None
    verdicts: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    steps: list[NodeEnd] = field(default_factory=list)
    lessons: Markup = Markup("")


def intake_view(settings: Settings, row: RunRow, run_dir: Path) -> IntakeView:
    """An intake run's part of the page."""
    pending = read_question(run_dir) if row.status == "waiting" else None
    return IntakeView(read_intake_memory(settings, row.id), pending)


def _latest_report(run_dir: Path, name: str) -> tuple[str, int | None]:
    """The final report if the run wrote one, else the last attempt's."""
    final = read_text(run_dir / name)
    if final:
        return final, None
    for number in reversed(attempt_numbers(run_dir)):
        text = read_text(run_dir / "attempts" / str(number) / name)
        if text:
            return text, number
    return "", None


def sections_view(run_dir: Path, ends: list[NodeEnd], declared: RunSections) -> SectionsView:
    """The sections ``declared`` by a run's agent, read from its folder."""
    report, attempt = _latest_report(run_dir, declared.report) if declared.report else ("", None)
    verdicts = [(n, v) for n in attempt_numbers(run_dir) if declared.verdicts
                and isinstance(v := read_json(run_dir / "attempts" / str(n) / declared.verdicts), dict)]
    return SectionsView(declared=declared, report=markdown_html(report) if report else Markup(""),
                        report_attempt=attempt, verdicts=verdicts, steps=list(ends) if declared.steps else [],
                        lessons=(markdown_html(read_text(run_dir / declared.lessons)) if declared.lessons
                                 else Markup("")))
