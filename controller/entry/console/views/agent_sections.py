"""The parts of a run page that belong to one kind of agent: an intake run's conversation and
memory, a blueprint run's report, QA findings, role steps and the lessons it was given."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from agents.ports.replies import PendingQuestion, read_question
from controller.entry.console.views.attempts import attempt_numbers, read_json, read_text
from controller.entry.console.views.intake_memory import IntakeMemory, read_intake_memory
from controller.entry.console.views.markdown import markdown_html
from controller.entry.console.views.nodes import NodeEnd
from controller.platform.settings import Settings
from controller.platform.store import RunRow

REPORT_FILE = "report.md"
LESSONS_FILE = "lessons.md"


@dataclass(frozen=True)
class IntakeView:
    """The conversation so far, the question the run waits on (if it waits), and the memory."""

    memory: IntakeMemory
    pending: PendingQuestion | None


@dataclass(frozen=True)
class BlueprintView:
    """The report (rendered, sanitised), QA's verdict per attempt, the role steps, the lessons given."""

    report: Markup
    report_attempt: int | None
    qa: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    steps: list[NodeEnd] = field(default_factory=list)
    lessons: Markup = Markup("")


def intake_view(settings: Settings, row: RunRow, run_dir: Path) -> IntakeView:
    """An intake run's part of the page."""
    pending = read_question(run_dir) if row.status == "waiting" else None
    return IntakeView(read_intake_memory(settings, row.id), pending)


def _latest_report(run_dir: Path) -> tuple[str, int | None]:
    """The final report if the run wrote one, else the last attempt's."""
    final = read_text(run_dir / REPORT_FILE)
    if final:
        return final, None
    for number in reversed(attempt_numbers(run_dir)):
        text = read_text(run_dir / "attempts" / str(number) / REPORT_FILE)
        if text:
            return text, number
    return "", None


def blueprint_view(run_dir: Path, ends: list[NodeEnd]) -> BlueprintView:
    """A blueprint run's part of the page."""
    report, attempt = _latest_report(run_dir)
    qa = [(n, v) for n in attempt_numbers(run_dir)
          if isinstance(v := read_json(run_dir / "attempts" / str(n) / "qa.json"), dict)]
    return BlueprintView(report=markdown_html(report) if report else Markup(""), report_attempt=attempt, qa=qa,
                         steps=list(ends), lessons=markdown_html(read_text(run_dir / LESSONS_FILE)))
