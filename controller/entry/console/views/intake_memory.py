"""An intake run's graph memory and conversation, read for the page.

The memory (nodes, each field's value and history, conflicts) comes through the memory port,
:func:`controller.runner.memory.run_memory`, exactly as ``python -m controller memory RUN_ID``
prints it: a run with a subject shows the subject's memory across its conversations.

The conversation (each turn's question and reply) is the run's own log, read through the same
port (:func:`controller.runner.memory.run_turns`: the run folder's ``conversation.sqlite``
read-only, or the state database), bounded. A log or a memory that cannot be read is an empty
section with the reason, never an error page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from agents.ports.errors import PlatformError
from agents.ports.memory import MemoryView
from controller.platform.settings import Settings
from controller.runner.memory import run_memory, run_turns

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


def read_intake_memory(settings: Settings, run_id: str) -> IntakeMemory:
    """The graph memory of intake run ``run_id`` and its turns."""
    try:
        view: MemoryView | None = run_memory(settings, run_id)
        problem = ""
    except PlatformError as exc:
        view, problem = None, exc.message
    return IntakeMemory(view, read_turns(settings, run_id), problem)


def read_turns(settings: Settings, run_id: str) -> list[Turn]:
    """The run's turns, oldest first ([] when there is none yet or the log cannot be read)."""
    return [_turn(entry.step, entry.data, entry.at) for entry in run_turns(settings, run_id, MAX_TURNS)]


def _turn(number: int, data: str, at: str) -> Turn:
    """One turn of the log (the agent keeps ``{"question": {"text": ...}, "reply": ..., ...}``)."""
    try:
        value = json.loads(data)
    except ValueError:
        value = None
    value = value if isinstance(value, dict) else {}
    question = value.get("question")
    text = question.get("text", "") if isinstance(question, dict) else question
    return Turn(number, str(text or ""), str(value.get("reply") or ""), at)
