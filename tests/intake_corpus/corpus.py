"""The intake agent's conversation corpus: scripted conversations in classes, run and judged.

Each ``<class>.toml`` here holds one class of conversations (``class = "..."``, then
``[[conversation]]`` tables): a goal, the nodes (shipped ones, or this folder's ``nodes/``, as a
target's), the replies, the facts the memory must hold at the end (``expected``), optionally
sentences some question must have said (``says``: "150 is more than 120"), fields that must end
skipped (``skipped = ["Expenses.rent"]``: TOML has no null) and, for memory
across conversations, several ``[[conversation.day]]`` tables with their own ``today``, replies
and nodes, all talking to one subject. A conversation runs in-process through the agent's own
graph with the offline roles, with a throwaway memory of its own (the memory port's SQLite
store in a temporary folder), every day's clock fixed, so relative dates read the same on any
day the corpus runs. It passes when every day passes (a day without ``expected``: every
required field filled or skipped, no open conflict; the last day: exactly the expected facts)
and every ``says`` was said.

``make eval-intake`` (:mod:`tools.eval_intake`) prints the pass rate per class; the unit test
``tests/unit/agents/intake/test_corpus.py`` holds every conversation to passing.
"""

from __future__ import annotations

import datetime
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.intake.catalogue import available, select
from agents.intake.memory import GraphMemory
from agents.intake.roles import OfflineRoles
from agents.intake.run import converse
from agents.intake.state import IntakeContext
from agents.intake.target import Expected, IntakeTarget, check_expected
from controller.platform.memory_sql import SqliteMemoryStores

CORPUS = Path(__file__).resolve().parent
TODAY = datetime.date(2026, 6, 15)


@dataclass(frozen=True)
class Day:
    """One conversation with the subject: its date, replies and nodes."""

    today: datetime.date
    replies: tuple[str, ...]
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """A scripted conversation of a class (one day or several)."""

    klass: str
    name: str
    goal: str
    days: tuple[Day, ...]
    expected: Expected
    says: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """``file/name``: how tests and the eval name it."""
        return f"{self.klass}/{self.name}"


@dataclass(frozen=True)
class Outcome:
    """How a conversation ended."""

    conversation: Conversation
    passed: bool
    problems: tuple[str, ...]


def load(folder: Path = CORPUS) -> list[Conversation]:
    """Every conversation of every class file in ``folder``, in file order."""
    out = []
    for path in sorted(folder.glob("*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        for raw in document["conversation"]:
            out.append(_conversation(document["class"], raw))
    return out


def _conversation(klass: str, raw: dict[str, Any]) -> Conversation:
    nodes = tuple(raw.get("nodes", ()))
    days = tuple(Day(datetime.date.fromisoformat(d.get("today", TODAY.isoformat())), tuple(d["replies"]),
                     tuple(d.get("nodes", nodes))) for d in raw.get("day", ())) \
        or (Day(TODAY, tuple(raw["replies"]), nodes),)
    expected = {node: dict(fields) for node, fields in raw["expected"].items()}
    for key in raw.get("skipped", ()):  # TOML has no null: a skipped field is listed as "Node.field"
        node, _, name = key.partition(".")
        expected.setdefault(node, {})[name] = None
    return Conversation(klass, raw["name"], raw["goal"], days, expected, tuple(raw.get("says", ())))


def run(conversation: Conversation, folder: Path = CORPUS) -> Outcome:
    """Run every day of ``conversation`` with one subject's throwaway memory; judge the end."""
    known = available(folder)
    problems: list[str] = []
    said: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sandloop-intake-corpus-") as scratch:
        stores = SqliteMemoryStores(Path(scratch))
        for number, day in enumerate(conversation.days, start=1):
            last = number == len(conversation.days)
            schemas = {name: known[name] for name in select(known, list(day.nodes), conversation.goal)}
            expected = check_expected(conversation.expected, schemas, conversation.id) if last else None
            target = IntakeTarget(conversation.name, folder, conversation.goal, tuple(schemas), schemas,
                                  day.replies, expected)
            status, found, questions = _day(target, stores, f"{conversation.name}-day{number}", day.today)
            said += questions
            problems += [f"day {number}: {p}" for p in found] if status != "passed" else []
    problems += [f"no question said {text!r}" for text in conversation.says if not any(text in q for q in said)]
    return Outcome(conversation, not problems, tuple(problems))


def _day(target: IntakeTarget, stores: SqliteMemoryStores, run_id: str,
         today: datetime.date) -> tuple[str, list[str], list[str]]:
    """One day's conversation: its status, problems and the questions it asked."""
    noon = datetime.datetime(today.year, today.month, today.day, 12, tzinfo=datetime.UTC)
    memory = GraphMemory(stores.for_subject("corpus subject"), None, run_id, lambda: noon)
    try:
        context = IntakeContext(run_id, target, memory, None, len(target.replies), OfflineRoles(),
                                subject="corpus subject")
        final = converse(context, lambda _event: None)
        questions = [str(turn["question"]["text"]) for turn in memory.transcript()]
    finally:
        memory.close()
    return final.get("status", "failed"), list(final.get("problems", [])), questions


def rates(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    """Passed and total per class, in the corpus's order."""
    out: dict[str, tuple[int, int]] = {}
    for outcome in outcomes:
        passed, total = out.get(outcome.conversation.klass, (0, 0))
        out[outcome.conversation.klass] = (passed + outcome.passed, total + 1)
    return out
