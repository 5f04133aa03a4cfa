"""The run page: the run's facts, its graph with node states, its progress lines, attempts, files."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from agents.ports.artefacts import SUMMARY_FILE
from agents.registry import AGENTS
from controller.entry.console.views.agent_sections import IntakeView, SectionsView, intake_view, sections_view
from controller.entry.console.views.attempts import Attempt, attempts
from controller.entry.console.views.backlog import backlog
from controller.entry.console.views.graph_svg import graph_svg
from controller.entry.console.views.lines import Window, window
from controller.entry.console.views.nodes import NodeStates, node_states
from controller.entry.console.views.paths import local_names
from controller.entry.console.views.run_rows import duration_of
from controller.entry.console.views.summary import summary_facts
from controller.entry.service import artefacts
from controller.platform.settings import Settings
from controller.platform.store import RunRow, RunStore
from controller.runner import dispatch
from controller.runner.dispatch import CONSOLE_FILE


@dataclass(frozen=True)
class RunView:
    """What the run page shows."""

    row: RunRow
    href: str
    duration: float | None
    graph: Markup
    nodes: NodeStates
    lines: Window
    stream_after: int | None
    node: str
    attempts: list[Attempt]
    files: list[tuple[str, int]]
    summary: list[tuple[str, str]]
    can_cancel: bool
    can_resume: bool
    intake: IntakeView | None = None
    sections: SectionsView | None = None


def resumable(row: RunRow, run_dir: Path) -> bool:
    """Whether Resume would be accepted (the API's rule: ended in error or cancelled, started, unfinished)."""
    return (row.status in ("error", "cancelled") and dispatch.resumable(run_dir)
            and not (run_dir / SUMMARY_FILE).is_file())


def graph_of(row: RunRow, states: NodeStates, node: str) -> Markup:
    """The agent's graph, nodes classed by how they ended (and the running and the selected one)."""
    if row.agent not in AGENTS:
        return Markup("")
    classes = states.classes(frozenset(AGENTS[row.agent].info.failure_reasons), live=not row.ended)
    if node:
        classes[node] = f"{classes.get(node, '')} selected".strip()
    return graph_svg(row.agent, classes, f"/runs/{quote(row.id, safe='')}?node={{node}}#lines")


def progress(store: RunStore, row: RunRow, run_dir: Path, start: int | None) -> tuple[Window, int | None]:
    """The lines the page shows, and the journal id its live stream starts after (None: no stream).
    A live run's last lines come from its journal (see :mod:`~controller.entry.console.views.backlog`);
    an ended run's, or an earlier page of lines, from console.txt."""
    if row.ended or start is not None:
        return _local(window(run_dir / CONSOLE_FILE, start), row.id), None
    return _local(backlog(store, row.id, row.last_event), row.id), row.last_event


def _local(lines: Window, run_id: str) -> Window:
    """The lines with their paths named as in the run folder (no server path in the page)."""
    return replace(lines, lines=tuple(replace(line, text=local_names(line.text, run_id)) for line in lines.lines))


def run_view(settings: Settings, store: RunStore, row: RunRow, node: str, start: int | None) -> RunView:
    """The page of ``row``; ``node`` filters the lines, ``start`` pages them."""
    run_dir = settings.runs_dir / row.id
    states = node_states(run_dir)
    lines, after = progress(store, row, run_dir, start)
    info = AGENTS[row.agent].info if row.agent in AGENTS else None
    return RunView(
        row=row, href=f"/runs/{quote(row.id, safe='')}", duration=duration_of(row, time.time()),
        graph=graph_of(row, states, node), nodes=states, lines=lines, stream_after=after, node=node,
        attempts=attempts(run_dir, states.ends), files=artefacts.listing(run_dir),
        summary=summary_facts(row.summary, row.agent, row.id),
        can_cancel=not row.ended, can_resume=resumable(row, run_dir),
        intake=intake_view(settings, row, run_dir) if info is not None and info.memory else None,
        sections=sections_view(run_dir, states.ends, info.sections) if info is not None and info.sections else None,
    )
