"""An intake run's graph memory and conversation, read for the page.

The memory (nodes, each field's value and history, conflicts) comes through the memory port,
:func:`controller.runner.memory.run_memory`, exactly as ``python -m controller memory RUN_ID``
prints it: a run with a subject shows the subject's memory across its conversations.

The conversation (each turn's question and reply) is the run's own: the run folder's
``conversation.sqlite``, whose ``turns`` table ``agents/intake/memory.py`` documents, read here
read-only (``mode=ro``) and bounded. A file or a memory that cannot be read is an empty section
with the reason, never an error page.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from agents.ports.errors import PlatformError
from agents.ports.memory import MemoryView
from controller.platform.settings import Settings
from controller.runner.memory import run_memory

CONVERSATION_FILE = "conversation.sqlite"
MAX_TURNS = 500


@dataclass(frozen=True)
class Turn:
    """One turn: the question asked and the reply given (empty while it waits)."""

    number: int
    question: str
    reply: str
    at: str


@dataclass(frozen=True)
class IntakeMemory:
    """The memory (None with ``problem`` when it cannot be read) and the conversation's turns."""

    view: MemoryView | None
    turns: list[Turn] = field(default_factory=list)
    problem: str = ""


def read_intake_memory(settings: Settings, run_id: str, run_dir: Path) -> IntakeMemory:
    """The graph memory of intake run ``run_id`` and its turns."""
    try:
        view: MemoryView | None = run_memory(settings, run_id)
        problem = ""
    except PlatformError as exc:
        view, problem = None, exc.message
    return IntakeMemory(view, read_turns(run_dir), problem)


def read_turns(run_dir: Path) -> list[Turn]:
    """The run's turns, oldest first ([] when there is none yet or the file cannot be read)."""
    path = run_dir / CONVERSATION_FILE
    if not path.is_file() or path.is_symlink():
        return []
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as db:
            rows = db.execute(f"SELECT turn, question, reply, at FROM turns ORDER BY turn LIMIT {MAX_TURNS}").fetchall()
    except sqlite3.Error:
        return []
    return [Turn(int(turn), _question(question), str(reply or ""), str(at or "")) for turn, question, reply, at in rows]


def _question(raw: object) -> str:
    """The question's text (the agent keeps the question as a JSON document with its ``text``)."""
    try:
        value = json.loads(str(raw))
    except ValueError:
        return str(raw or "")
    return str(value.get("text", "")) if isinstance(value, dict) else str(value or "")
