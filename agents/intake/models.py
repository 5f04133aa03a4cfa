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
QuestionKind = Literal["field", "rephrase", "confirm", "refresh", "propose", "example", "changes", "event"]


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
        """What "never repeats" is about: a field is asked once, rephrased once; a conflict confirmed
        once; a held value that is older than its freshness confirmed once."""
        if self.kind == "confirm":
            return f"conflict:{self.conflict}"
        if self.kind == "changes":
            return "changes"
        if self.kind == "propose":
            return f"{self.node}.{self.field}#propose:{self.old!r}"
        suffix = {"rephrase": "#again", "refresh": "#refresh", "example": "#example",
                  "event": "#event"}.get(self.kind, "")
        return f"{self.node}.{self.field}{suffix}"

    def to_json(self) -> dict[str, Any]:
        """The state's and the memory's form."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Question:
        """Back from :meth:`to_json`."""
        return cls(**doc)


@dataclass(frozen=True)
class FactUpdate:
    """One fact the state resolver found (the seed's ``updates[]`` entry).

    ``temporal`` is the time the reply spoke of; ``frame`` the time the field is about (its
    question's: "What was your revenue last year?" is about the past). A fact whose time is its
    field's frame is the field's value; any other is kept as history only.
    """

    node: str
    field: str
    value: Scalar | None
    temporal: Temporal = "present"
    frame: Temporal = "present"
    is_correction: bool = False
    skipped: bool = False
    conflict: bool = False
    source: str = "user_input"
    confidence: float = 0.9
    reasoning: str = ""
    words: str = ""
    """The words of the reply the value was read from (kept with it, listed in the run's report)."""

    @property
    def current(self) -> bool:
        """The fact is the field's value now (not a past or future one, for this field)."""
        return self.temporal == self.frame


@dataclass(frozen=True)
class Rejection:
    """A value read for a field that its schema refuses: not stored, and the reason is said."""

    node: str
    field: str
    value: Scalar
    reason: str


@dataclass(frozen=True)
class Proposal:
    """A value the resolver read without enough confidence to store it: it is asked, never stored
    ("Did you mean 2,500 for your emergency fund?")."""

    node: str
    field: str
    value: Scalar
    words: str
    why: str


#: The source of a value a life event set, or emptied to be asked again ("I was laid off": the income).
LIFE_EVENT = "life_event"


@dataclass(frozen=True)
class Resolution:
    """What the state resolver made of one reply."""

    updates: tuple[FactUpdate, ...] = ()
    answered: bool = False
    priority_shift: str | None = None
    keep_conflict: int | None = None
    reasoning: str = ""
    rejected: tuple[Rejection, ...] = ()
    refreshed: tuple[str, ...] = ()
    """``Node.field`` of held values the user confirmed are still right (a refresh question's "yes")."""
    unsure: tuple[Proposal, ...] = ()
    """Values read without confidence: each becomes a confirmation question, none is stored."""

    @property
    def conflicts_detected(self) -> bool:
        """A present fact contradicts the graph without a correction cue."""
        return any(update.conflict for update in self.updates)

    @property
    def understood(self) -> bool:
        """Anything at all came out of the reply (else the loop survives an unparsed reply)."""
        return bool(self.updates or self.rejected or self.refreshed or self.unsure) or self.keep_conflict is not None

    def to_json(self) -> dict[str, Any]:
        """The memory's form (a turn's record)."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Resolution:
        """Back from :meth:`to_json`."""
        return cls(**{**doc, "updates": tuple(FactUpdate(**u) for u in doc["updates"]),
                      "rejected": tuple(Rejection(**r) for r in doc.get("rejected", ())),
                      "refreshed": tuple(doc.get("refreshed", ())),
                      "unsure": tuple(Proposal(**p) for p in doc.get("unsure", ()))})


@dataclass(frozen=True)
class NodeStatus:
    """One node as the decision role sees it: counts and names, no conversation."""

    name: str
    filled: int
    missing_required: tuple[str, ...]
    open_conflicts: int
    pending: int
    priority_on: tuple[str, ...] = ()
    priority: int = 50
    """The node's declared ``x-priority`` (0-100)."""
    goal_terms: tuple[str, ...] = ()
    """Its ``x-goal-keywords`` that the goal names."""
    always: bool = False
    """Every conversation needs it (``x-always``)."""


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
