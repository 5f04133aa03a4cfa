"""State and run context of the intake agent (LangGraph), seed 002.

The state is what the checkpointer stores, so it holds plain data only: the current node,
the number of replies read (``attempt``: each turn is one, so progress lines and resume say
``[attempt N]``), the pending question as a dict, the keys of every question asked, the
priority events. The graph's facts live in the graph memory (SQLite under the run folder),
which the context carries; the seed's GraphMemory is that object, not part of the state.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from agents.intake.memory import GraphMemory
from agents.intake.replies import Replies
from agents.intake.roles import Roles
from agents.intake.target import IntakeTarget
from agents.ports.artefacts import ArtefactStore
from agents.ports.events import NodeEvent

#: A verdict of agents/ports/status.py: passed, failed, or incomplete (fields not understood).
FinalStatus = str


class IntakeState(TypedDict, total=False):
    """The loop's state."""

    node: str
    """The node being collected."""
    attempt: int
    """Replies read so far (the turn)."""
    step: int
    """Decisions made so far (edges)."""
    question: dict[str, Any]
    """The pending question (Question.to_json), {} when the node is complete."""
    asked: Annotated[list[str], operator.add]
    """Keys of every question asked: the info role never asks one twice."""
    reply: str
    """The reply of the current turn."""
    shift: str
    """The priority event of the last reply ('' none): the decision role replans at once."""
    priority: Annotated[list[str], operator.add]
    """Every priority event so far, oldest first."""
    visited_all: bool
    """The decision role is done."""
    out_of_replies: bool
    """The script ended before the decision role was done."""
    unparsed: Annotated[int, operator.add]
    """Replies nothing was understood from (the loop goes on)."""
    status: FinalStatus
    """Set by finish."""
    problems: list[str]
    """What the judgement found wrong."""
    not_understood: list[str]
    """``Node.field`` the person could not answer in three tries (the run is ``incomplete``)."""
    events: Annotated[list[NodeEvent], operator.add]
    """One entry per node run."""


@dataclass(frozen=True)
class IntakeContext:
    """What a run is given, fixed for its whole duration (never checkpointed)."""

    run_id: str
    target: IntakeTarget
    memory: GraphMemory
    artefacts: ArtefactStore | None
    """The run folder; None for ``check``, which keeps nothing."""
    max_turns: int
    roles: Roles
    """The three roles: deterministic rules or a language model."""
    replies: Replies | None = None
    """Where each turn's reply comes from; None: the target's script."""
    subject: str = ""
    """The person talked to, whose memory persists ('' for the run's own memory)."""
