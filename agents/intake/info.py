"""The info role, deterministic: the next question for one node, or "complete".

Its input is one node (:class:`InfoInput`): the schema, the node's values, skips, open
conflicts, held values older than their freshness, the keys of the questions already asked
and the conversation so far. It asks one question at a time and never repeats one: a field is
asked once and, if the reply did not answer it, rephrased once (saying why, when its value was
refused: "Sorry, 150 is more than 120, the most for age."); after that it is left unanswered.
An open conflict is confirmed first; then a held value older than its freshness is confirmed
("Last time, on 2025-11-02, you said ... Is that still right?"), and asked anew if it is not.
Only required fields are asked: optional ones are kept when volunteered. A field the memory
holds (from this conversation or an earlier one with the subject) is never asked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.intake.models import Question, Scalar
from agents.intake.schema import NodeSchema
from agents.untrusted_text import one_line

#: Turns of the conversation the info role is given (the latest).
CONVERSATION_TURNS = 20


@dataclass(frozen=True)
class InfoInput:
    """All the info role sees: one node, and the conversation so far."""

    node: str
    schema: NodeSchema
    values: dict[str, Scalar | None]
    skipped: frozenset[str]
    open_conflicts: tuple[dict[str, object], ...]
    asked: frozenset[str]
    stale: tuple[tuple[str, str], ...] = ()
    """Held fields older than their freshness, with the date they were given (YYYY-MM-DD)."""
    conversation: tuple[dict[str, Any], ...] = field(default=())
    """The latest turns: question (node, field, text), reply, what was understood, values refused."""
    cleared: frozenset[str] = frozenset()
    """Fields a life event emptied ("I was laid off": the held income no longer holds): asked again."""


def next_question(inp: InfoInput) -> Question | None:
    """The next question for the node, or None when it is complete (nothing left to ask)."""
    questions = open_questions(inp)
    return questions[0] if questions else None


def open_questions(inp: InfoInput) -> list[Question]:
    """Every question the node could still ask, in order: conflicts, stale values, then required fields."""
    out = [_confirm(inp, c) for c in inp.open_conflicts] + _proposed(inp)
    stale = dict(inp.stale)
    for name, since in inp.stale:
        out.append(Question(inp.node, name, _refresh_text(inp, name, since), kind="refresh",
                            old=_scalar(inp.values.get(name))))
    for name in inp.schema.required:
        held = inp.values.get(name) is not None and name not in stale
        if held or name in inp.skipped:
            continue
        changed = Question(inp.node, name, f"Since that change: {inp.schema.question(name)}", kind="event")
        first = Question(inp.node, name, inp.schema.question(name))
        again = Question(inp.node, name, _rephrased(inp.schema.question(name), refused(inp, name)), kind="rephrase")
        example = Question(inp.node, name, _with_example(inp, name), kind="example")
        tries = (changed, again, example) if name in inp.cleared else (first, again, example)
        out += [q for q in tries if q.key not in inp.asked][:1]
    return [q for q in out if q.key not in inp.asked]


def _proposed(inp: InfoInput) -> list[Question]:
    """A value the last reply gave without confidence, asked back ("Did you mean 2,500 for your
    emergency fund?"): "yes" stores it, a value corrects it, anything else leaves the field to its
    own question."""
    out = []
    for turn in inp.conversation[-1:]:
        for proposal in turn.get("unsure", ()):
            name = str(proposal.get("field", ""))
            if proposal.get("node") != inp.node or name not in inp.schema.properties \
                    or inp.values.get(name) is not None:
                continue
            value = _scalar(proposal.get("value"))
            about = (inp.schema.properties[name].description or name.replace("_", " ")).rstrip(".").lower()
            shown = f"{value:,}" if isinstance(value, int | float) and not isinstance(value, bool) else value
            out.append(Question(inp.node, name, f"Did you mean {shown} for your {about}? (yes, or the right value)",
                                kind="propose", old=value))
    return out


def _with_example(inp: InfoInput, name: str) -> str:
    """The third and last try: the question with an example of the form expected."""
    return f"Sorry, I still could not read that. {inp.schema.question(name)} For example: {example(inp.schema, name)}"


def example(schema: NodeSchema, name: str) -> str:
    """An example answer of the field's form."""
    spec = schema.properties[name]
    if spec.enum:
        return "one of " + ", ".join(spec.enum)
    if spec.unit:
        return f"12 {spec.unit}"
    return {"money": "2,500", "year": "2030", "date": "2027-03-01 or the 1st of March 2027", "boolean": "yes or no",
            "number": "3"}.get(spec.kind, "a few words")


def refused(inp: InfoInput, name: str) -> str:
    """Why the latest reply's value for field ``name`` was refused ('' when none was)."""
    for turn in reversed(inp.conversation[-1:]):
        for rejection in turn.get("rejected", ()):
            if rejection.get("node") == inp.node and rejection.get("field") == name:
                return str(rejection.get("reason", ""))
    return ""


def _scalar(value: object) -> Scalar | None:
    return value if isinstance(value, int | float | str | bool) else None


def _refresh_text(inp: InfoInput, name: str, since: str) -> str:
    about = (inp.schema.properties[name].description or name.replace("_", " ")).rstrip(".").lower()
    return (f"Last time, on {since}, you said your {about} was {inp.values.get(name)}. Is that still right? "
            "(yes, or the value now)")


def _confirm(inp: InfoInput, conflict: dict[str, object]) -> Question:
    name = str(conflict["field"])
    old, new = conflict["old"], conflict["new"]
    text = (f"Earlier you said {name.replace('_', ' ')} was {old}, now {new}: is {new} right? "
            "(yes, no, or the right value)")
    return Question(inp.node, name, text, kind="confirm", conflict=int(str(conflict["id"])), old=_scalar(old))


def _rephrased(question: str, reason: str = "") -> str:
    why = f"Sorry, {one_line(reason, 200)}." if reason else "Sorry, I did not get that."
    return f"{why} {question} (you can also say skip)"
