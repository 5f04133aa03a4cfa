"""The corpus of replies as people type them (issue 40), and the harness that reads each one.

Each ``<class>.toml`` here is one class of replies (``class``, ``about``, then ``[[case]]``
tables); ``nodes/*.json`` are forms of a user's own (nodes beside the shipped ones). A case is
one turn of the agent's own code: the agent has just asked the field ``asks`` of ``node``, the
memory (the memory port's store, in RAM) holds ``known`` for that node, the clock reads
``today`` (default 2026-06-15); the reply is resolved by the offline roles and applied to the
memory, exactly as a run does. Then the fields the turn **stored** (a value applied as current
by that turn) are compared:

- a stored field absent from ``expect`` and ``may``, or stored with another value, or listed in
  ``unsure``, is a **wrong fact** (numbers within 0.1 % relative or 0.01 absolute; dates as
  ``YYYY-MM-DD`` text);
- a field of ``expect`` not stored is a **miss** (the agent asked to confirm it, or read nothing);
- a case passes with no wrong fact and no miss.

``Harness(all_forms=True)`` gives the reader every form (the shipped nodes and the corpus's own), as a
target does, instead of the asked node's alone; a fact stored then in another node than the asked one
is a **stray fact** unless the case's ``elsewhere`` (``{"Node.field" = value}``) allows it.

``python -m tests.intake_replies`` (``make eval-intake``) prints per class the passes, wrong
facts and misses; ``tests/unit/agents/intake/test_replies_corpus.py`` holds CI to the goals.
"""

from __future__ import annotations

import datetime
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.intake.catalogue import available
from agents.intake.memory import GraphMemory
from agents.intake.models import FactUpdate, Question, Resolution, Scalar
from agents.intake.resolver import ResolverInput
from agents.intake.roles import OfflineRoles
from agents.intake.schema import NodeSchema
from controller.platform.memory_sql import SqliteMemoryStores

CORPUS = Path(__file__).resolve().parent
TODAY = datetime.date(2026, 6, 15)


@dataclass(frozen=True)
class Case:
    """One reply to one question, and what must (and may) be stored."""

    klass: str
    name: str
    node: str
    asks: str
    reply: str
    expect: dict[str, Any]
    may: dict[str, Any] = field(default_factory=dict)
    unsure: tuple[str, ...] = ()
    known: dict[str, Any] = field(default_factory=dict)
    today: datetime.date = TODAY
    elsewhere: dict[str, Any] = field(default_factory=dict)
    """Facts of other nodes (``Node.field``) the reply may store when every form is loaded."""

    @property
    def id(self) -> str:
        """``class/name``: how tests and the eval name it."""
        return f"{self.klass}/{self.name}"


@dataclass(frozen=True)
class Outcome:
    """What one case stored, what it asked to confirm, and how that compares."""

    case: Case
    stored: dict[str, Scalar | None]
    asked: tuple[str, ...]
    wrong: tuple[str, ...]
    missed: tuple[str, ...]
    words: dict[str, str] = field(default_factory=dict)
    stray: tuple[str, ...] = ()
    """Facts stored in other nodes that ``elsewhere`` does not allow (every form loaded)."""

    @property
    def passed(self) -> bool:
        """No wrong fact and no miss."""
        return not self.wrong and not self.missed


@dataclass
class ClassRate:
    """One class's counts."""

    cases: int = 0
    passed: int = 0
    wrong: int = 0
    missed: int = 0

    @property
    def rate(self) -> float:
        """Passes over cases."""
        return self.passed / self.cases if self.cases else 0.0


def load(folder: Path = CORPUS) -> list[Case]:
    """Every case of every class file in ``folder``, in file order."""
    out = []
    for path in sorted(folder.glob("*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        klass = str(document.get("class", path.stem))
        for raw in document.get("case", ()):
            out.append(Case(klass, str(raw["name"]), str(raw["node"]), str(raw["asks"]), str(raw["reply"]),
                            dict(raw.get("expect", {})), dict(raw.get("may", {})), tuple(raw.get("unsure", ())),
                            dict(raw.get("known", {})), _date(raw.get("today", TODAY)),
                            dict(raw.get("elsewhere", {}))))
    return out


def _date(value: object) -> datetime.date:
    if isinstance(value, datetime.date):
        return value
    return datetime.date.fromisoformat(str(value))


class Harness:
    """Runs cases against one set of schemas (the shipped nodes and the corpus's own forms): the reader is
    given the asked node's alone, or (``all_forms``) every one, as a target gives it."""

    def __init__(self, folder: Path = CORPUS, *, all_forms: bool = False) -> None:
        self.schemas: dict[str, NodeSchema] = available(folder)
        self.all_forms = all_forms
        self.stores = SqliteMemoryStores(folder)  # only scratch() is used: nothing is written under folder

    def run(self, case: Case) -> Outcome:
        """One turn of the agent's own code (see the module doc)."""
        schema = self.schemas[case.node]
        noon = datetime.datetime(case.today.year, case.today.month, case.today.day, 12,
                                 tzinfo=datetime.UTC)
        memory = GraphMemory(self.stores.scratch(), None, f"replies-{case.name}"[:60], lambda: noon)
        try:
            _preload(memory, case)
            question = Question(case.node, case.asks, schema.question(case.asks))
            schemas = dict(self.schemas) if self.all_forms else {case.node: schema}
            inp = ResolverInput(case.reply, question, schemas, memory.get_all_nodes_data(), case.today)
            resolution = OfflineRoles().resolve(inp)
            memory.apply_updates(1, question, case.reply, resolution)
            stored = _stored(memory, case.node)
            elsewhere = {f"{node}.{name}": value for node in schemas if node != case.node
                         for name, value in _stored(memory, node).items()}
            open_conflicts = tuple(str(c["field"]) for c in memory.conflicts(open_only=True))
        finally:
            memory.close()
        asked = tuple(dict.fromkeys([p.field for p in resolution.unsure if p.node == case.node] + list(open_conflicts)))
        return Outcome(case, stored, asked, _wrong(case, stored), _missed(case, stored), _words(resolution),
                       _stray(case, elsewhere))

    def close(self) -> None:
        """Nothing to release (scratch stores close with their memory)."""


def _preload(memory: GraphMemory, case: Case) -> None:
    """``known`` as facts the memory held before the reply (turn 0 of the run)."""
    if not case.known:
        return
    facts = tuple(FactUpdate(case.node, name, value, source="known", reasoning="held before the reply")
                  for name, value in case.known.items())
    memory.apply_updates(0, Question(case.node, next(iter(case.known)), "known"), "", Resolution(facts, True))


def _stored(memory: GraphMemory, node: str) -> dict[str, Scalar | None]:
    """The fields turn 1 made current, with their current values."""
    found = memory.view().node(node)
    if found is None:
        return {}
    return {f.name: f.value for f in found.fields  # a skip (None) is no fact
            if f.value is not None and any(change.turn == 1 and change.applied for change in f.history)}


def _words(resolution: Resolution) -> dict[str, str]:
    return {u.field: u.words for u in resolution.updates if u.current and u.words}


def same(expected: object, got: object) -> bool:
    """Numbers within 0.1 % relative (0.01 absolute); anything else equal (text case-insensitively)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected == got
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(float(expected), float(got), rel_tol=1e-3, abs_tol=0.01)
    if isinstance(expected, datetime.date):
        expected = expected.isoformat()
    if isinstance(expected, str) and isinstance(got, str):
        return expected.strip().casefold() == got.strip().casefold()
    return expected == got


def _wrong(case: Case, stored: dict[str, Scalar | None]) -> tuple[str, ...]:
    out = []
    for name, value in stored.items():
        allowed = {**case.may, **case.expect}
        if name in case.unsure:
            out.append(f"{name}={value!r} stored where a confirmation was right")
        elif name not in allowed:
            out.append(f"{name}={value!r} stored, not expected")
        elif not same(allowed[name], value):
            out.append(f"{name}={value!r} stored, expected {allowed[name]!r}")
    return tuple(out)


def _stray(case: Case, elsewhere: dict[str, Scalar | None]) -> tuple[str, ...]:
    """Facts stored in other nodes than the asked one that the case's ``elsewhere`` does not allow."""
    return tuple(f"{name}={value!r} stored, not allowed elsewhere" if name not in case.elsewhere
                 else f"{name}={value!r} stored, allowed {case.elsewhere[name]!r}"
                 for name, value in elsewhere.items() if name not in case.elsewhere
                 or not same(case.elsewhere[name], value))


def _missed(case: Case, stored: dict[str, Scalar | None]) -> tuple[str, ...]:
    return tuple(f"{name}={value!r} not stored" for name, value in case.expect.items() if name not in stored)


def run_all(cases: list[Case], folder: Path = CORPUS, *, all_forms: bool = False) -> list[Outcome]:
    """Every case through one harness."""
    harness = Harness(folder, all_forms=all_forms)
    return [harness.run(case) for case in cases]


def rates(outcomes: list[Outcome]) -> dict[str, ClassRate]:
    """Cases, passes, wrong facts and misses per class, in the corpus's order."""
    out: dict[str, ClassRate] = {}
    for outcome in outcomes:
        rate = out.setdefault(outcome.case.klass, ClassRate())
        rate.cases += 1
        rate.passed += outcome.passed
        rate.wrong += len(outcome.wrong)
        rate.missed += len(outcome.missed)
    return out
