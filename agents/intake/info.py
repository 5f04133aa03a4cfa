"""The info role, deterministic: the next question for one node, or "complete".

Its input is one node (:class:`InfoInput`): the schema, the node's values, skips and open
conflicts, and the keys of the questions already asked. It asks one question at a time and
never repeats one: a field is asked once and, if the reply did not answer it, rephrased
once (saying it may be skipped); after that it is left unanswered. An open conflict is
confirmed first. Only required fields are asked: optional ones are kept when volunteered.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.intake.models import Question, Scalar
from agents.intake.schema import NodeSchema


@dataclass(frozen=True)
class InfoInput:
    """All the info role sees: one node."""

    node: str
    schema: NodeSchema
    values: dict[str, Scalar | None]
    skipped: frozenset[str]
    open_conflicts: tuple[dict[str, object], ...]
    asked: frozenset[str]


def next_question(inp: InfoInput) -> Question | None:
    """The next question for the node, or None when it is complete (nothing left to ask)."""
    questions = open_questions(inp)
    return questions[0] if questions else None


def open_questions(inp: InfoInput) -> list[Question]:
    """Every question the node could still ask, in order: conflicts first, then required fields."""
    out = [_confirm(inp, c) for c in inp.open_conflicts]
    for field in inp.schema.required:
        if inp.values.get(field) is not None or field in inp.skipped:
            continue
        first = Question(inp.node, field, inp.schema.question(field))
        again = Question(inp.node, field, _rephrased(inp.schema.question(field)), kind="rephrase")
        out += [q for q in (first, again) if q.key not in inp.asked][:1]
    return [q for q in out if q.key not in inp.asked]


def _confirm(inp: InfoInput, conflict: dict[str, object]) -> Question:
    field = str(conflict["field"])
    old, new = conflict["old"], conflict["new"]
    text = (f"Earlier you said {field.replace('_', ' ')} was {old}, now {new}: is {new} right? "
            "(yes, no, or the right value)")
    return Question(inp.node, field, text, kind="confirm", conflict=int(str(conflict["id"])),
                    old=old if isinstance(old, int | float | str | bool) else None)


def _rephrased(question: str) -> str:
    return f"Sorry, I did not get that. {question} (you can also say skip)"
