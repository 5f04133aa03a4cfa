"""The state resolver role, deterministic: every fact of one reply, for any node.

Its input is narrow (:class:`ResolverInput`): the reply, the question it answers, the node
schemas and the graph's current values. It never writes; the graph memory applies what it
returns. Rules (the seed's "State Resolution & Conflict Handling"):

- a clause naming a field's keyword gives that field a value (cross-node: any node);
- a clause that names no field answers the question asked, if it holds a value of its kind;
- "will", "next month" → ``future``, "used to" → ``past``: recorded, never the present value;
- "actually", "sorry", "I meant" → a correction (overwrite, history kept, no conflict);
- a life event ("I lost my job") sets the values the schemas declare for it, as corrections,
  and is a priority shift;
- a present value that contradicts the graph without a cue is a conflict (kept, then confirmed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agents.intake import patterns
from agents.intake.models import FactUpdate, Question, Resolution, Scalar, Temporal
from agents.intake.schema import FieldSchema, NodeSchema

#: Words dropped before a free-text answer ("I live in Lisbon" → "Lisbon").
_TEXT_FILLERS = ("my name is", "i live in", "i work at", "i work for", "i'm", "i am", "it's", "it is", "is",
                 "at", "for", "in", "as", "a", "an", "the", "called", "named", ":")
MAX_TEXT_VALUE = 80


@dataclass(frozen=True)
class ResolverInput:
    """All the resolver sees: one reply, its question, the schemas and the current values."""

    reply: str
    question: Question
    schemas: dict[str, NodeSchema]
    values: dict[str, dict[str, Scalar | None]]


@dataclass(frozen=True)
class _Clause:
    """One clause of the reply: its text as written, lower-cased, and its cues."""

    text: str
    lower: str
    temporal: Temporal
    correction: bool


def resolve(inp: ResolverInput) -> Resolution:
    """The reply's facts as updates, whether it answered the question, and any priority shift."""
    reply = inp.reply[: patterns.MAX_REPLY_CHARS]
    question = inp.question
    if patterns.is_skip(reply) and question.kind == "confirm":
        return Resolution(answered=True, reasoning="confirmation skipped: both values kept, the conflict stays open")
    if patterns.is_skip(reply):
        skip = FactUpdate(question.node, question.field, None, skipped=True, source="user_skip",
                          reasoning="the user skipped the question")
        return Resolution((skip,), answered=True, reasoning="skipped")
    updates: list[FactUpdate] = []
    shift: str | None = None
    for clause in _clauses(reply):
        found, event = _clause_facts(clause, inp, answered=has_answer(updates, question))
        updates += found
        shift = shift or event
    updates, keep = confirmation(reply, question, _last_per_field(updates))
    updates = with_conflicts(updates, inp.values)
    answered = has_answer(updates, question) or keep is not None
    return Resolution(tuple(updates), answered, shift, keep, reasoning(updates, shift, keep))


def _clauses(reply: str) -> list[_Clause]:
    """The reply's clauses; a correction cue ("Sorry. It's 58,000") holds for the clauses after it too."""
    out = []
    correcting = False
    for text in patterns.clauses(reply):
        lower = text.lower()
        correcting = correcting or patterns.is_correction(lower)
        out.append(_Clause(text, lower, patterns.temporal(lower), correcting or patterns.no_longer(lower)))
    return out


def _clause_facts(clause: _Clause, inp: ResolverInput, *, answered: bool) -> tuple[list[FactUpdate], str | None]:
    """Facts of one clause: a life event's values, keyword facts, else the answer to the question."""
    event_updates, event = _event_facts(clause, inp.schemas)
    taken = {(u.node, u.field) for u in event_updates}
    used: set[int] = set()
    keyword_updates = [u for u in _keyword_facts(clause, inp.schemas, used) if (u.node, u.field) not in taken]
    updates = event_updates + keyword_updates
    if not answered and not has_answer(updates, inp.question):
        updates += _answer(clause, inp.question, inp.schemas, used)
    return updates, event


def _event_facts(clause: _Clause, schemas: dict[str, NodeSchema]) -> tuple[list[FactUpdate], str | None]:
    """A life event stated in the present or past changes the present; a future one changes nothing yet."""
    found = patterns.events(clause.lower)
    if not found or clause.temporal == "future":
        return [], None
    event = found[0]
    updates = [FactUpdate(node, name, spec.on_event[event], is_correction=True, confidence=0.95,
                          reasoning=f"life event {event}: {clause.text[:80]}")
               for node, schema in schemas.items() for name, spec in schema.properties.items()
               if event in spec.on_event]
    return updates, event


def _keyword_facts(clause: _Clause, schemas: dict[str, NodeSchema], used: set[int]) -> list[FactUpdate]:
    """Fields whose keywords the clause names, each given the nearest unused value of its kind."""
    matched = []
    for node, schema in schemas.items():
        for name, spec in schema.properties.items():
            where = min((p for p in (patterns.keyword_at(clause.lower, k) for k in spec.keywords) if p >= 0),
                        default=-1)
            if where >= 0:
                matched.append((where, node, name, spec))
    updates = []
    for where, node, name, spec in sorted(matched, key=lambda m: m[0]):
        value = _value(clause, spec, where, used)
        if value is not None:
            updates.append(_fact(clause, node, name, value, f"names {name.replace('_', ' ')}"))
    return updates


def _answer(clause: _Clause, question: Question, schemas: dict[str, NodeSchema], used: set[int]) -> list[FactUpdate]:
    """What is left of a clause after the named fields took their values, read as the answer."""
    spec = schemas[question.node].properties[question.field]
    if question.kind == "confirm" and spec.kind in ("text", "boolean") and patterns.yes_no(clause.lower) is not None:
        return []  # "yes" / "no" to "which is right?" is not the value itself (see confirmation)
    if used and spec.kind not in ("money", "number", "date"):
        return []  # free text or yes/no after named facts would be guessed, not read
    value = _value(clause, spec, 0, used, answer=True)
    if value is None:
        return []
    return [_fact(clause, question.node, question.field, value, "answers the question")]


def _fact(clause: _Clause, node: str, name: str, value: Scalar, why: str) -> FactUpdate:
    return FactUpdate(node, name, value, temporal=clause.temporal, is_correction=clause.correction,
                      reasoning=f"{clause.temporal} statement that {why}: {clause.text[:80]}")


def _value(clause: _Clause, spec: FieldSchema, where: int, used: set[int], *, answer: bool = False) -> Scalar | None:
    """A value of ``spec``'s kind in the clause, nearest after ``where`` (then before it)."""
    kind = spec.kind
    if kind in ("money", "number"):
        return _nearest(patterns.numbers(clause.lower), where, used, zero=patterns.no_longer(clause.lower))
    if kind == "date":
        return _nearest(patterns.dates(clause.lower), where, used)
    if kind == "boolean":
        return _boolean(clause, where, answer)
    if kind == "choice":
        return next((word for word in spec.enum or [] if patterns.keyword_at(clause.lower, word) >= 0), None)
    return _text(clause, where if not answer else 0, spec, answer)


def _nearest(found: list[patterns.Found], where: int, used: set[int], *, zero: bool = False) -> Scalar | None:
    free = [f for f in found if f.start not in used]
    pick = next((f for f in free if f.start >= where), free[-1] if free else None)
    if pick is None:
        return 0 if zero else None
    used.add(pick.start)
    return pick.value


def _boolean(clause: _Clause, where: int, answer: bool) -> bool | None:
    if answer:
        return patterns.yes_no(clause.lower)
    before = clause.lower[max(0, where - 24): where]
    return not (patterns.negated(before) or patterns.no_longer(clause.lower))


def _text(clause: _Clause, where: int, spec: FieldSchema, answer: bool) -> str | None:
    """Free text: the words after the keyword (or the whole answer), without filler words."""
    if not answer:
        word = next((k for k in spec.keywords if patterns.keyword_at(clause.lower, k) == where), "")
        where += len(word)
    text = clause.text[where:] if len(clause.text) == len(clause.lower) else clause.lower[where:]
    text = text.strip(" ,.:;!?\"'")
    changed = True
    while changed and text:
        changed = False
        for filler in _TEXT_FILLERS:
            if text.lower().startswith(filler + " ") or text.lower() == filler:
                text, changed = text[len(filler):].strip(" ,.:;"), True
    return text[:MAX_TEXT_VALUE] or None


def has_answer(updates: list[FactUpdate], question: Question) -> bool:
    return any(u.node == question.node and u.field == question.field and u.temporal == "present"
               for u in updates)


def _last_per_field(updates: list[FactUpdate]) -> list[FactUpdate]:
    """One update per field and time: the last thing said wins within a reply."""
    kept: dict[tuple[str, str, str], FactUpdate] = {}
    for update in updates:
        kept[(update.node, update.field, update.temporal)] = update
    return list(kept.values())


def with_conflicts(updates: list[FactUpdate], values: dict[str, dict[str, Scalar | None]]) -> list[FactUpdate]:
    """Flag present values that contradict the graph without a correction cue."""
    out = []
    for update in updates:
        current = values.get(update.node, {}).get(update.field)
        contradicts = (update.temporal == "present" and not update.is_correction and not update.skipped
                       and current is not None and current != update.value)
        out.append(replace(update, conflict=True) if contradicts else update)
    return out


def confirmation(reply: str, question: Question, updates: list[FactUpdate]) -> tuple[list[FactUpdate], int | None]:
    """The answer to "which is right?": a value corrects; "yes" keeps the newer value; "no" restores the older."""
    if question.kind != "confirm":
        return updates, None
    if has_answer(updates, question):
        return [replace(u, is_correction=True) if (u.node, u.field) == (question.node, question.field) else u
                for u in updates], None
    answer = patterns.yes_no(reply.lower())
    if answer is True:
        return updates, question.conflict
    if answer is False and question.old is not None:
        back = FactUpdate(question.node, question.field, question.old, is_correction=True,
                          reasoning="the user confirmed the earlier value")
        return [*updates, back], None
    return updates, None


def reasoning(updates: list[FactUpdate], shift: str | None, keep: int | None) -> str:
    parts = [f"{u.node}.{u.field}={u.value!r} ({u.temporal}{', correction' if u.is_correction else ''}"
             f"{', conflict' if u.conflict else ''})" for u in updates]
    if keep is not None:
        parts.append(f"conflict {keep} confirmed: newer value kept")
    if shift:
        parts.append(f"priority shift: {shift}")
    return "; ".join(parts) or "nothing understood"
