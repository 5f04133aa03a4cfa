"""The memory port: a graph memory of facts (seed 002), written by an agent, kept by the controller.

A conversational agent (intake) collects facts into nodes (``Personal.age``, ``Income.annual_amount``)
and keeps every value ever given for a field, with when, where from, the value it replaced
and why. Such a memory belongs either to one run or to a **subject** (the person the agent
talks to, ``run --subject NAME``), whose memory outlives the conversation: the next one
starts from its facts. The agent states here what it needs of a store; the controller
implements it (``controller/platform/memory_sql.py``: SQLite under the runs folder, or PostgreSQL) and
hands the agent a :class:`MemoryStores` in its run context. The controller reads a memory
back through the same port (``python -m controller memory RUN_ID | --subject NAME``, the
console's intake page), as plain frozen records that never change shape once written:

    MemoryView(subject, nodes=(NodeMemory(name, fields=(FieldMemory(name, value, skipped,
               updated_at, history=(FieldChange(value, at, source, previous, reasoning,
               temporal, applied, correction, run_id, turn), ...)), ...)), ...),
               conflicts=(Conflict(id, node, field, old, new, at, run_id, turn, resolved,
               resolution), ...), runs=(run ids, oldest first), targets=(target names, first seen first))

Writes are one :class:`MemoryWrite` per conversation turn, applied whole or not at all and
at most once per ``(run_id, turn)``: a run resumed after a crash cannot apply a turn twice.

Beside the facts, a conversation keeps its own log (:class:`ConversationLog`: each turn's
question and reply, the decisions, the edges with reasons, the traversal, node snapshots),
also kept by the controller: in the run folder's ``conversation.sqlite``, or in the service's
database when runs are given one, so that any replica can resume the conversation.

A subject's name is user input: :func:`check_subject` bounds it to a safe pattern, and a
store never uses it as a path (:func:`subject_key`: a hash of its normalised form).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from agents.ports.errors import ConfigError

Scalar = int | float | str | bool
Temporal = Literal["past", "present", "future"]
#: A subject's name: a letter or digit, then letters, digits, spaces and . _ @ ' - (at most 80).
SUBJECT_PATTERN = re.compile(r"^[^\W_][\w .@'-]{0,79}$")
SUBJECT_HINT = "a subject is a name such as 'Maria Silva' or maria@example.org: letters, digits, spaces, . _ @ ' -"


@dataclass(frozen=True)
class FieldChange:
    """One value given for a field: the seed's field history entry.

    Attributes:
        value: What was said (None: the user skipped the question).
        at: When, ISO 8601 in UTC.
        source: Where it came from: ``user_input``, ``user_skip``, ``life_event``, ``confirmation``.
        previous: The field's current value when this one was given.
        reasoning: Why the agent read it so (one line).
        temporal: ``present``, or ``past``/``future`` (kept as history, never the current value).
        applied: It became the field's current value.
        correction: The user corrected an earlier value ("actually ...").
        run_id: The conversation it was said in.
        turn: The reply it was said in (1-based).
    """

    value: Scalar | None
    at: str
    source: str
    previous: Scalar | None
    reasoning: str
    temporal: Temporal
    applied: bool
    correction: bool
    run_id: str
    turn: int


@dataclass(frozen=True)
class FieldMemory:
    """One field: its current value (None and ``skipped``: the user skipped it) and its history."""

    name: str
    value: Scalar | None
    skipped: bool
    updated_at: str
    history: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class NodeMemory:
    """One node and its fields (those with a current value or a history), by name."""

    name: str
    fields: tuple[FieldMemory, ...]

    def field(self, name: str) -> FieldMemory | None:
        """The field called ``name``, if the node has one."""
        return next((f for f in self.fields if f.name == name), None)

    def values(self) -> dict[str, Scalar | None]:
        """The current value of every field that has one (or was skipped: None)."""
        return {f.name: f.value for f in self.fields if f.updated_at}


@dataclass(frozen=True)
class Conflict:
    """A contradiction: a new present value against the held one without a correction cue.

    ``resolved`` once the user confirmed one value (or corrected it); ``resolution`` says how.
    """

    id: int
    node: str
    field: str
    old: Scalar | None
    new: Scalar | None
    at: str
    run_id: str
    turn: int
    resolved: bool
    resolution: str


@dataclass(frozen=True)
class MemoryView:
    """A whole graph memory as read at one moment: nodes (by name), conflicts (oldest first), runs,
    and the targets whose conversations wrote it (first seen first: what ``follows`` looks for)."""

    subject: str
    nodes: tuple[NodeMemory, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    runs: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    def node(self, name: str) -> NodeMemory | None:
        """The node called ``name``, if the memory holds it."""
        return next((n for n in self.nodes if n.name == name), None)

    def values(self) -> dict[str, dict[str, Scalar | None]]:
        """Every node's current values: ``{"Income": {"annual_amount": 80000}}``."""
        return {node.name: node.values() for node in self.nodes if node.values()}

    def open_conflicts(self) -> tuple[Conflict, ...]:
        """The conflicts no one has resolved yet."""
        return tuple(c for c in self.conflicts if not c.resolved)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the console's and ``memory --json``'s form)."""
        return asdict(self)


@dataclass(frozen=True)
class FieldWrite:
    """A value to record in a field's history; ``applied`` ones also become its current value."""

    node: str
    field: str
    value: Scalar | None
    temporal: Temporal = "present"
    source: str = "user_input"
    reasoning: str = ""
    applied: bool = True
    correction: bool = False
    skipped: bool = False


@dataclass(frozen=True)
class ConflictWrite:
    """A contradiction to record (``old``: the value held, ``new``: the one just given)."""

    node: str
    field: str
    old: Scalar | None
    new: Scalar | None
    resolved: bool = False
    resolution: str = ""


@dataclass(frozen=True)
class MemoryWrite:
    """Everything one turn changes, applied in one transaction, once per ``(run_id, turn)``.

    Attributes:
        run_id: The conversation.
        turn: The reply (1-based); 0 for what a conversation records before its first reply.
        at: The time to stamp on every change (ISO 8601, UTC): the agent's clock.
        fields: History entries (and current values, for the applied ones), in order.
        conflicts: Contradictions to open (or to record as already resolved).
        close: Open conflicts to resolve: ``(conflict id, resolution)``.
        close_fields: Every open conflict of a field to resolve: ``(node, field, resolution)``.
        target: The target whose conversation this is ('' when it has none: a throwaway check).
    """

    run_id: str
    turn: int
    at: str
    fields: tuple[FieldWrite, ...] = ()
    conflicts: tuple[ConflictWrite, ...] = ()
    close: tuple[tuple[int, str], ...] = ()
    close_fields: tuple[tuple[str, str, str], ...] = ()
    target: str = ""


class GraphStore(Protocol):
    """One graph memory (a run's or a subject's), durable."""

    def view(self) -> MemoryView:
        """Everything it holds now."""
        ...

    def commit(self, write: MemoryWrite) -> bool:
        """Apply ``write`` whole; False (and nothing changed) when its turn was applied before."""
        ...

    def close(self) -> None:
        """Release it (the store may be opened again later)."""
        ...


#: What a conversation log keeps, one kind of entry each.
LogKind = Literal["turns", "decisions", "edges", "traversal", "snapshots"]


@dataclass(frozen=True)
class LogEntry:
    """One entry of a conversation log: its step (a turn or decision number; 0 for a snapshot),
    its name (a snapshot's node; '' otherwise), its data (JSON text) and when it was kept."""

    step: int
    name: str
    data: str
    at: str


class ConversationLog(Protocol):
    """One conversation's log: entries by kind, each under ``(step, name)``.

    ``put`` keeps the first entry under a key and ignores later ones (a resumed run writes
    again what it wrote before), unless ``replace`` (a node's snapshot: the latest wins).
    """

    def put(self, kind: LogKind, step: int, data: str, at: str, *, name: str = "", replace: bool = False) -> None:
        """Keep an entry (once per key unless ``replace``)."""
        ...

    def get(self, kind: LogKind, step: int, name: str = "") -> str | None:
        """The data kept under a key, or None."""
        ...

    def entries(self, kind: LogKind) -> list[LogEntry]:
        """Every entry of ``kind``, by step then name."""
        ...

    def close(self) -> None:
        """Release it."""
        ...


class MemoryConversationLog:
    """A conversation log in RAM, gone once dropped (a throwaway check's)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, int, str], tuple[str, str]] = {}

    def put(self, kind: LogKind, step: int, data: str, at: str, *, name: str = "", replace: bool = False) -> None:
        """Keep an entry (once per key unless ``replace``)."""
        if replace or (kind, step, name) not in self._entries:
            self._entries[(kind, step, name)] = (data, at)

    def get(self, kind: LogKind, step: int, name: str = "") -> str | None:
        """The data kept under a key, or None."""
        found = self._entries.get((kind, step, name))
        return None if found is None else found[0]

    def entries(self, kind: LogKind) -> list[LogEntry]:
        """Every entry of ``kind``, by step then name."""
        return [LogEntry(step, name, data, at)
                for (k, step, name), (data, at) in sorted(self._entries.items()) if k == kind]

    def close(self) -> None:
        """Nothing to release."""


class MemoryStores(Protocol):
    """Where graph memories live (implemented by the controller)."""

    def for_subject(self, subject: str) -> GraphStore:
        """The memory of ``subject`` (checked with :func:`check_subject`), created empty if new."""
        ...

    def for_run(self, run_id: str) -> GraphStore:
        """The memory of one run without a subject (kept with the run)."""
        ...

    def scratch(self) -> GraphStore:
        """A throwaway memory, gone once closed (``check`` judges each conversation in one)."""
        ...

    def conversation(self, run_id: str) -> ConversationLog:
        """The log of run ``run_id``'s conversation (kept with the run; created empty if new)."""
        ...


class NoMemoryStores:
    """The stores of a context that was given none: every request is refused with one line."""

    def _refuse(self) -> GraphStore:
        raise ConfigError("this run was given no graph memory store", hint="the runner passes one; a test must too")

    def for_subject(self, subject: str) -> GraphStore:
        """Refused."""
        return self._refuse()

    def for_run(self, run_id: str) -> GraphStore:
        """Refused."""
        return self._refuse()

    def scratch(self) -> GraphStore:
        """Refused."""
        return self._refuse()

    def conversation(self, run_id: str) -> ConversationLog:
        """Refused."""
        raise ConfigError("this run was given no graph memory store", hint="the runner passes one; a test must too")


def check_subject(name: str) -> str:
    """``name`` as a subject: NFC-normalised, blanks collapsed, within :data:`SUBJECT_PATTERN`.

    Raises:
        ConfigError: empty, too long, or holding a character outside the pattern (a slash, a control).
    """
    normal = " ".join(unicodedata.normalize("NFC", name).split())
    if not SUBJECT_PATTERN.match(normal):
        shown = normal[:40].encode("ascii", "backslashreplace").decode("ascii")
        raise ConfigError(f"{shown!r} is not a subject name", hint=SUBJECT_HINT)
    return normal


def subject_key(name: str) -> str:
    """The name a store files a subject under: 32 hex digits of the SHA-256 of its case-folded form,
    so 'Maria Silva' and 'maria  silva' are one subject and no name is ever a path."""
    return hashlib.sha256(check_subject(name).casefold().encode("utf-8")).hexdigest()[:32]

