"""What the three roles take and give: small frozen records, each with its JSON form.

Each role gets its own narrow input (the seed's isolation): the state resolver a reply, the
question and the graph's values; the info role one node; the decision role only structured
node statuses (never a reply). Outputs go into the graph memory and the graph's state as
plain JSON-able dicts (the checkpoint holds plain data).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Scalar = int | float | str | bool
Temporal = Literal["past", "present", "future"]
QuestionKind = Literal["field", "rephrase", "confirm"]


@dataclass(frozen=True)
class Question:
    """What the info role asks: one field of one node, or the confirmation of a conflict."""

    node: str
    field: str
    text: str
    kind: QuestionKind = "field"
    conflict: int | None = None
    old: Scalar | None = None

    @property
    def key(self) -> str:
        """What "never repeats" is about: a field is asked once, rephrased once; a conflict confirmed once."""
        if self.kind == "confirm":
            return f"conflict:{self.conflict}"
        return f"{self.node}.{self.field}" + ("#again" if self.kind == "rephrase" else "")

    def to_json(self) -> dict[str, Any]:
        """The state's and the memory's form."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Question:
        """Back from :meth:`to_json`."""
        return cls(**doc)


@dataclass(frozen=True)
class FactUpdate:
    """One fact the state resolver found (the seed's ``updates[]`` entry)."""

    node: str
    field: str
    value: Scalar | None
    temporal: Temporal = "present"
    is_correction: bool = False
    skipped: bool = False
    conflict: bool = False
    source: str = "user_input"
    confidence: float = 0.9
    reasoning: str = ""


@dataclass(frozen=True)
class Resolution:
    """What the state resolver made of one reply."""

    updates: tuple[FactUpdate, ...] = ()
    answered: bool = False
    priority_shift: str | None = None
    keep_conflict: int | None = None
    reasoning: str = ""

    @property
    def conflicts_detected(self) -> bool:
        """A present fact contradicts the graph without a correction cue."""
        return any(update.conflict for update in self.updates)

    @property
    def understood(self) -> bool:
        """Anything at all came out of the reply (else the loop survives an unparsed reply)."""
        return bool(self.updates) or self.keep_conflict is not None

    def to_json(self) -> dict[str, Any]:
        """The memory's form (a turn's record)."""
        return {**asdict(self), "updates": [asdict(u) for u in self.updates]}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Resolution:
        """Back from :meth:`to_json`."""
        return cls(**{**doc, "updates": tuple(FactUpdate(**u) for u in doc["updates"])})


@dataclass(frozen=True)
class NodeStatus:
    """One node as the decision role sees it: counts and names, no conversation."""

    name: str
    filled: int
    missing_required: tuple[str, ...]
    open_conflicts: int
    pending: int
    priority_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecisionInput:
    """The decision role's whole input (the seed: goal, structured data, previous node)."""

    goal: str
    nodes: tuple[NodeStatus, ...]
    previous: str
    priority_events: tuple[str, ...] = ()
    data: dict[str, dict[str, Scalar | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """Next node with a reason, or ``visited_all``."""

    next_node: str | None
    reason: str
    visited_all: bool = False
