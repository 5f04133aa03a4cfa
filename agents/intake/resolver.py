"""The state resolver role, deterministic: every fact of one reply, for any node of the target.

Its input is narrow (:class:`ResolverInput`): the reply, the question it answers, the node
schemas, the graph's current values and the conversation's today. It never writes; the graph
memory applies what it returns. The reply is capped (``MAX_REPLY_CHARS``) before anything reads
it, cut into clauses (a new clause where a new statement starts: "..., and I live in Porto",
never inside "find a job and keep the house"), and each clause is read so:

1. Values are found first, by libraries (:mod:`agents.intake.reading`): number words become
   digits, amounts and dates become spans. A date takes its digits ("Founded in March 2015"
   holds no number 2015).
2. Triggers tie a field to a place in the clause: its ``x-keywords`` (the nearest value of the
   field's kind, after or a little before), its ``x-cues`` (the value follows at once: "I'm 41",
   "my name is Maria Silva", "I live in Porto"), an enum value or synonym it names.
3. **One span fills at most one field**: a value taken is used up; free text stops where
   another field's part of the clause starts (:mod:`agents.intake.text_values`).
4. What is left answers the question asked, if it holds a value of the field's kind (a
   near spelling of an enum value counts here only).
5. Every value is checked against its property's JSON Schema (:mod:`agents.intake.values`);
   one that fails is not stored but returned as a :class:`~agents.intake.models.Rejection`
   with its reason, which the info role says when it asks again.

Time (the seed's temporal context): a clause's cue ("will", "next month" → ``future``; "used to",
"last year" → ``past``; "now" → ``present``) is compared with the time the field is about, its
question's (``x-temporal``, else the cue words of its question: "What was your revenue last
year?" is about the past). A fact of the field's own time is its value; any other is history
only. A clause without a cue speaks of the field's time; dates are facts of their own time.

Corrections ("actually", "sorry", "I meant") overwrite with the history kept; a life event ("I
lost my job") sets the values the schemas declare for it, as corrections, and is a priority
shift; a present value that contradicts the graph without a cue is a conflict (kept, then
confirmed); the answer to a refresh question (a held value older than its node's freshness)
replaces the value without a conflict, and "yes" confirms it as it is.
"""

from __future__ import annotations

import datetime
import itertools
import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from agents.intake import patterns, reading, text_values, units
from agents.intake.models import (
    LIFE_EVENT,
    FactUpdate,
    Proposal,
    Question,
    Rejection,
    Resolution,
    Scalar,
    Temporal,
)
from agents.intake.reading import Span
from agents.intake.schema import FieldSchema, NodeSchema
from agents.intake.values import ChoiceMatch, check, find_choices, normal

#: Longest free-text value kept (a schema's maxLength may say less).
MAX_TEXT_VALUE = 160
#: A present statement that replaces a held value without a conflict question ("... now", "these days").
_NOW_REPLACES = re.compile(r"\b(?:now|these days|nowadays|at the moment|currently)\b")
#: A reply longer than this is a story: a value not named by its field's words is asked, not stored.
LONG_REPLY = 300
#: Longest reply whose words are taken as a free-text answer without a cue (a story is no town's name).
MAX_TEXT_ANSWER_REPLY = 100
#: How far a value may stand from its keyword: after the keyword's end, before its start.
KEYWORD_AFTER = 48
KEYWORD_BEFORE = 32
#: What may stand between a cue and its value ("I'm about 41").
_CUE_GAP = re.compile(r"^[\s:,]{0,3}(?:(?:about|around|roughly|nearly|almost|just|over|under|approximately|exactly|"
                      r"only|is|are|was|of)\s{1,3}){0,2}(?:~\s?)?$", re.IGNORECASE)
#: Words dropped before a free-text answer ("It's Lisbon" → "Lisbon").
_ANSWER_LEAD = re.compile(r"^\s*(?:(?:well|so|ok|okay|hmm|um|yes|yeah|sure|oh|hi|hello|hey|hiya|heya|howdy|hallo|then)"
                          r"(?:\sthere)?\b[,!.\s]*|"
                          # a greeting that is also a word ("morning shifts") leads only before a mark or "i'm"
                          r"(?:yo|greetings|(?:good\s)?(?:morning|afternoon|evening)|good day|g'?day)(?:\sthere)?"
                          r"(?:\s{0,2}[,!.]+\s*|\s(?=i'?m\b|im\b|i am\b|it'?s\b|its\b|my\b|this is\b)))?"
                          r"(?:(?:my name is|my name's|name's|i'm called|call me|i live in|i am in|i'm in|i work as|"
                          r"i work at|i work for|i'm|im|i am|it's|its|it is|that's|thats|that is|this is|we're in|"
                          r"we live in|live in|living in|based in|(?:(?:we|i)\s)?(?:just\s)?moved (?:here\s)?to|"
                          r"in|to)\b)?\s*"
                          r"(?:my (?:husband|wife|partner|mum|mom|mother|dad|father|son|daughter|brother|sister|"
                          r"friend)\b[,:\s]*)?(?:(?:spelled|spelt|written)(?: as)?\s)?(?:an?\s)?"
                          r"(?:(?:guy|man|woman|lady|bloke|chap|fellow|couple|company|firm|agency|landlord|landlady)"
                          r"\s(?:called|named)\s)?"  # "a guy called Martin Bird"
                          r"(?:my own (?:company|business|firm|shop)\s?[-–:,]?\s(?:called\s|named\s)?)?",
                          re.IGNORECASE)


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


@dataclass(frozen=True)
class ResolverInput:
    """All the resolver sees: one reply, its question, the schemas, the current values, today."""

    reply: str
    question: Question
    schemas: dict[str, NodeSchema]
    values: dict[str, dict[str, Scalar | None]]
    today: datetime.date = field(default_factory=_today)


@dataclass
class _Clause:
    """One clause: its text (number words as digits), lower-cased, cues, the values in it and
    what the fields read so far took of it."""

    text: str
    lower: str
    cue: Temporal | None
    correction: bool
    spans: list[Span]
    used: set[int] = field(default_factory=set)
    claims: list[tuple[int, int]] = field(default_factory=list)
    refused: set[int] = field(default_factory=set)
    unsure: list[Proposal] = field(default_factory=list)
    """Values read without confidence: asked, never stored."""
    words: str = ""
    """The words the last value taken was read from."""
    reply: str = ""
    """The whole reply (a unit said in one clause holds for a number in the next)."""
    today: datetime.date = datetime.date(2000, 1, 1)
    """The conversation's day (what "next Tuesday" is relative to)."""
    asked: tuple[str, str] = ("", "")
    """The field the question asked: a value right after a correction cue is its, not a keyword's."""
    held: Scalar | None = None
    """The asked field's value held before the reply (a bare number near it is in the same unit)."""
    when: Temporal | None = None
    """The time of the value just taken, when its own words say it (over the clause's cue)."""
    others: list[tuple[Span, Temporal]] = field(default_factory=list)
    """Values of other times beside the one taken ("used to be 2,700"): kept as history."""
    options: set[tuple[int, int]] = field(default_factory=set)
    """The claims that are another field's option word: no end of the asked field's phrase ("the car loan")."""

    def take(self, index: int, start: int, end: int) -> Span:
        """Use span ``index`` up, with the part ``[start, end)`` of the clause that held it."""
        self.used.add(index)
        self.claims.append((start, end))
        span = self.spans[index]
        self.words = self.text[span.start:span.end]
        return span

    def free(self, *, answer: bool = False) -> list[tuple[int, Span]]:
        """The spans no field has taken (for an answer: nor one a named field refused)."""
        return [(i, s) for i, s in enumerate(self.spans) if i not in self.used and not (answer and i in self.refused)]


@dataclass(frozen=True)
class _Trigger:
    """Where a field is named in a clause: by a keyword, a cue, or one of its enum values."""

    at: int
    end: int
    node: str
    field: str
    spec: FieldSchema
    how: str
    choice: ChoiceMatch | None = None


def resolve(inp: ResolverInput) -> Resolution:
    """The reply's facts as updates, whether it answered the question, and any priority shift."""
    reply = inp.reply[: patterns.MAX_REPLY_CHARS]
    question = inp.question
    if patterns.is_skip(reply):
        return _skip(question)
    prefer = _prefer(_frame(inp.schemas, question.node, question.field))
    updates: list[FactUpdate] = []
    rejected: list[Rejection] = []
    shift: str | None = None
    unsure: list[Proposal] = []
    held = inp.values.get(question.node, {}).get(question.field)
    for clause in _clauses(reply, inp.today, prefer, (question.node, question.field), held):
        asked_unsure = any((p.node, p.field) == (question.node, question.field) for p in unsure)
        found, refused, event = _clause_facts(clause, inp, answered=has_answer(updates, question) or asked_unsure,
                                              doubted=asked_unsure and not has_answer(updates, question),
                                              other_time=_of_other_time(updates, question))
        updates += found
        rejected += refused
        unsure += clause.unsure
        shift = shift or event
    updates = _last_per_field(updates)
    updates, unsure = _retracted(reply, question, updates, unsure)
    updates = _proposal_answered(reply, question, updates)
    updates, keep, refreshed = confirmation(reply, question, updates)
    updates = with_conflicts(updates, inp.values, question)
    answered = has_answer(updates, question) or keep is not None or bool(refreshed) \
        or (question.kind == "changes" and (bool(updates) or patterns.yes_no(reply.lower()) is False))
    if question.kind == "example" and not answered and not any((p.node, p.field) == (question.node, question.field)
                                                               for p in unsure):
        updates.append(FactUpdate(question.node, question.field, None, skipped=True, source=NOT_UNDERSTOOD,
                                  reasoning="not understood after three tries: marked, the conversation goes on"))
        answered = True
    rejected = [r for r in rejected if not any((u.node, u.field) == (r.node, r.field) for u in updates)]
    updates = _not_held(reply, inp, updates)
    updates = _measured(reply, inp, updates)
    updates = _introduced(reply, inp, updates)
    updates = _introduced_age(reply, inp, updates)
    updates = _competing(updates, unsure, question)
    updates = _people_listed(reply, question, inp.schemas, updates, unsure)
    updates = _one_number_of_many(reply, question, inp.schemas, updates, unsure)
    updates = _turning(reply, question, inp.schemas, updates)
    updates = _gated(reply, inp.schemas, updates, unsure)
    updates = _elsewhere(reply, question, inp.schemas, updates, unsure)
    if len(reply) > LONG_REPLY:
        updates, unsure = _story(updates, unsure, question)
    sure = {(u.node, u.field) for u in updates if u.current}
    unsure = list({(p.node, p.field): p for p in reversed(unsure) if (p.node, p.field) not in sure}.values())[::-1]
    return Resolution(tuple(updates), answered, shift, keep,
                      reasoning(updates, shift, keep, rejected, refreshed, unsure), tuple(rejected), refreshed,
                      tuple(unsure))


#: Questions that ask for a field's value (its answer replaces a held value, without a conflict).
_ASKED_KINDS = ("field", "rephrase", "example", "propose", "event")
#: The source of a field marked after three unreadable answers (the run ends ``incomplete``).
NOT_UNDERSTOOD = "not_understood"


def _proposal_answered(reply: str, question: Question, updates: list[FactUpdate]) -> list[FactUpdate]:
    """"Did you mean 2,500 ...?": a value read answers it; "yes" stores the proposed value."""
    if question.kind != "propose" or has_answer(updates, question) or question.old is None:
        return updates
    if patterns.yes_no(reply.lower().strip()) is True:
        return [*updates, FactUpdate(question.node, question.field, question.old, source="confirmation",
                                     reasoning="the user confirmed the value asked back", words=reply[:120])]
    return updates


def _story(updates: list[FactUpdate], unsure: list[Proposal],
           question: Question) -> tuple[list[FactUpdate], list[Proposal]]:
    """In a long story, facts for fields the question did not ask are asked, not stored: a keyword
    there ("six months of everything", "fixed until 2028") names the field's subject, not its value."""
    kept = []
    for update in updates:
        volunteered = (update.node, update.field) != (question.node, question.field)
        if volunteered and update.current and update.value is not None and update.source == "user_input":
            unsure.append(Proposal(update.node, update.field, update.value, update.words,
                                   "a fact volunteered in a long story"))
        else:
            kept.append(update)
    return kept, unsure


def _elsewhere(reply: str, question: Question, schemas: dict[str, NodeSchema], updates: list[FactUpdate],
               unsure: list[Proposal]) -> list[FactUpdate]:
    """A fact volunteered for another node than the asked one is stored only when its own words tie it there;
    any doubt that it is the answer's value read again, or a weak keyword's, makes it asked (a Proposal)."""
    if question.kind not in _ASKED_KINDS or _spec(schemas, question.node, question.field) is None:
        return updates
    text = reading.digits_for_words(reply).lower()
    kept = []
    for update in updates:
        spec = _spec(schemas, update.node, update.field)
        volunteered = update.node != question.node and update.current and update.value is not None \
            and update.source == "user_input" and spec is not None \
            and not update.reasoning.startswith(_SAID_INSTEAD)  # "3 of us not 2": the held value named as wrong
        why = _why_elsewhere(text, question, schemas, update, spec, updates) if volunteered and spec else ""
        if why and update.value is not None:
            unsure.append(Proposal(update.node, update.field, update.value, update.words, why))
        else:
            kept.append(update)
    return kept


def _why_elsewhere(text: str, question: Question, schemas: dict[str, NodeSchema], update: FactUpdate,
                   spec: FieldSchema, updates: list[FactUpdate]) -> str:
    """Why a volunteered fact is asked rather than stored (empty: it is stored)."""
    asked = _spec(schemas, question.node, question.field)
    assert asked is not None
    words = update.words.lower()
    at = text.find(words) if words else -1
    clause = next((c for c in (reading.digits_for_words(c).lower() for c in patterns.clauses(text))
                   if words and words in c), "")
    if spec.kind == "text":
        # "i'm a big guy", "we want to settle": a phrase field's cue is weak, and the reply answered another question
        answered = any((u.node, u.field) == (question.node, question.field) and u.current and u.value is not None
                       for u in updates)
        return "a phrase volunteered beside the answer" if spec.text == "phrase" and answered else ""
    if spec.kind == "choice":
        # "actually make that 1300 to be safe": an option's word in a clause that corrects a number
        return "an option's word in a correction of a number" \
            if patterns.is_correction(clause) and _DIGIT.search(clause) else ""
    if spec.kind not in ("money", "number", "year", "date") or at < 0:
        return ""
    end = at + len(words)
    ours = [u for u in updates if u.node == question.node and u.words and u.value is not None
            and (s := _spec(schemas, u.node, u.field)) is not None and s.kind in ("money", "number", "year", "date")]
    if any(u is not update and re.search(rf"(?<![\d.,]){re.escape(words)}(?![\d.,])", u.words.lower())
           for u in ours):
        return "read from the words of the answer"  # "18 months" to a lease question; "5'11" to a height
    if spec.kind in ("year", "date"):
        # "its a 2015 golf" (by autotrader), "day before yesterday": a date needs its keyword right before it,
        # in a clause that holds none of the asked node's values ("680 now, over 700 by next year")
        gap = r"\s{1,3}(?:(?:in|on|since|from|at|of)\s{1,3})?"  # "founded in march 2015"
        before = any(re.search(rf"\b{re.escape(k)}{gap}$", text[:at]) or re.match(rf"{re.escape(k)}{gap}\S", words)
                     for k in spec.keywords + spec.cues)
        mixed = any(u.words.lower() in clause for u in ours)
        return "" if before and not mixed else "a date not tied to its field's word"
    if _TIME_UNIT.match(text, end):
        return "a duration, not this field's value"  # "6 weeks rent", "5 months clean"
    if _TAKEN_AWAY.search(text[max(0, at - 24):at]):
        return "an amount taken away in a sum"  # "300k minus the 180k mortgage so 120k"
    same = asked.kind == spec.kind
    answers = [u for u in updates if (u.node, u.field) == (question.node, question.field) and u.value is not None]
    now = [u for u in answers if u.current]
    if same and answers and not now:
        return "the asked field's value of now, perhaps"  # "i was 90kg in january, i'm 84 now" to the weight
    if same and any(u.is_correction and u.words and text.find(u.words.lower()) > at for u in now):
        return "a value the correction took back"  # "3 of us. actually 4"
    if not _beside(text, at, end, spec):
        return "its field's word is not beside it"  # "6, since the kids were little"; "23,000 still on the mortgage"
    return ""


def _beside(text: str, start: int, end: int, spec: FieldSchema) -> bool:
    """Whether one of the field's keywords or cues stands right beside the value (fillers only between)."""
    for word in (*spec.keywords, *spec.cues):
        for match in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", text):
            if match.end() <= start and _CUE_GAP.match(text[match.end():start]):
                return True
            if match.start() >= end and _AFTER_GAP.fullmatch(text[end:match.start()]):
                return True
            if start <= match.start() and match.end() <= end:
                return True
    return False


_DIGIT = re.compile(r"\d")
#: Between a value and its field's word after it: spaces, and the period it is paid in ("2,000 a month rent").
_AFTER_GAP = re.compile(r"\s{1,3}(?:(?:a|per|each|every)\s{1,3}(?:month|year|week|annum|yr|mo)\s{1,3})?")
#: Right after a number: a length of time ("6 weeks rent"), so no amount or count of the thing named ("42 years
#: old" is an age).
_TIME_UNIT = re.compile(r"\s{0,2}(?:days?|weeks?|wks?|months?|mths?|mos?|years?|yrs?)\b(?![\s-]{1,3}old\b)")
#: Right before an amount: it is taken away in a sum the reply makes.
_TAKEN_AWAY = re.compile(r"\b(?:minus|less|take away|takeaway|deduct\w*|subtract\w*)\s(?:the\s|my\s|a\s|our\s)?$")


def _one_number_of_many(reply: str, question: Question, schemas: dict[str, NodeSchema],
                        updates: list[FactUpdate], unsure: list[Proposal]) -> list[FactUpdate]:
    """The asked number read from a reply that holds another number no fact took ("my mum 150 and my
    dad 100"), or that adds ("600 on top"), or pays "every two weeks", or counts people it also names
    ("me, my wife and our 2 boys"): a sum or a conversion the reader did not make, so it is asked."""
    spec = _spec(schemas, question.node, question.field)
    if spec is None or spec.kind not in ("money", "number") or spec.unit or question.kind not in _ASKED_KINDS:
        return updates
    answer = next((u for u in updates if (u.node, u.field) == (question.node, question.field) and u.current
                   and isinstance(u.value, int | float) and not isinstance(u.value, bool)
                   and u.source == "user_input" and u.words), None)
    if answer is None or answer.value is None or len(reply) > LONG_REPLY:  # a story's are asked by _story
        return updates
    text = reading.digits_for_words(reply).lower()
    if _OPEN_PART.search(text):  # "2,500 ... and some premium bonds, not sure how much": the sum is not said
        unsure.append(Proposal(question.node, question.field, answer.value, answer.words, "a part not counted"))
        return [u for u in updates if u is not answer]
    if _SETTLES.search(text):  # a total, a correction or a time picked the value among the others
        return updates
    spans = reading.numbers(text, [])
    if spans and spans[0].value == answer.value and not _SUBTRACTS.search(text) \
            and _sum_of_the_rest(answer.value, [s.value for s in spans[1:]]):
        return updates  # the answer stated first, then broken down into the reply's other amounts: checked
    people = False
    # only a field that counts people is counted by the people a reply names ("65, same as my dad" is an age)
    counts = spec.kind == "number" and _counts_people(spec)
    for update in sorted(updates, key=lambda u: u is not answer):  # the numbers other facts were read from are theirs
        # the people a reply names count even when another fact took their words ("my wife": married)
        people = people or (update is not answer and counts and bool(_PEOPLE.search(text)))
        for words in {update.words.lower(), reading.digits_for_words(update.words).lower()} - {""}:
            at = text.find(words)
            if at >= 0:
                text = text[:at] + " " * len(words) + text[at + len(words):]
    people = people or (counts and bool(_PEOPLE.search(text)))
    text = _TAKEN_BACK.sub(" ", text)  # "i said 2 kids before but its 3": the 2 is no other amount
    gross = _gross_field(spec) and bool(_GROSS.search(text))
    others = [m for m in _LOOSE_NUMBER.finditer(text) if not _TIME_COUNT.match(text[m.end():m.end() + 12])
              and not (spec.kind == "money" and _PERCENT_AFTER.match(text, m.end()))  # "at 6.9%": a rate, no sum
              and not (gross and _marked(_NET_MARK, text, m.start(), m.end()))  # "2k take home" beside the gross
              and not _DESCRIBES.search(text, 0, m.start())]  # "three, all under ten": a bound of what was counted
    why = ("another number beside it" if others else "an amount that adds to another" if _ADDS.search(text)
           else "an amount paid every few weeks" if spec.kind == "money" and _EVERY_N.search(text)
           else "a count beside the people it names" if people else "")
    if not why:
        return updates
    unsure.append(Proposal(question.node, question.field, answer.value, answer.words, why))
    return [u for u in updates if u is not answer]


#: Words that take an amount away ("300k minus the 180k mortgage"): a first amount is then no total.
_SUBTRACTS = re.compile(r"\b(?:minus|less|take away|after|deduct\w*|off)\b")


def _sum_of_the_rest(value: Scalar, rest: list[Scalar]) -> bool:
    """Whether ``value`` is the sum of two or more other numbers ``rest`` (a total the reply states and
    breaks down: the sum is checked, never made)."""
    numbers = [float(v) for v in rest if isinstance(v, int | float) and not isinstance(v, bool)]
    return isinstance(value, int | float) and not isinstance(value, bool) and len(numbers) >= 2 \
        and len(numbers) == len(rest) and math.isclose(sum(numbers), float(value), abs_tol=0.005)


def _people_listed(reply: str, question: Question, schemas: dict[str, NodeSchema],
                   updates: list[FactUpdate], unsure: list[Proposal]) -> list[FactUpdate]:
    """A count of people (the household, "you included") answered by a reply that is nothing but a list of
    them, the person first among them: "me, my wife and our 2 boys" is 4, "me, my partner and our twins" 4,
    and without commas "me my partner her mum and our 2 kids" 5 (a possessive starts an item).
    Each item counts one, its number, or what "twins" says; an item of no known count ("our kids") and any
    other word leave the reply to the gate that asks (:func:`_one_number_of_many`). A count another field
    read from such a list ("our 2 kids" as dependants) is asked: another person listed may be one too."""
    spec = _spec(schemas, question.node, question.field)
    if spec is None or spec.kind != "number" or spec.unit or question.kind not in _ASKED_KINDS:
        return updates
    about = f"{spec.description} {spec.question or ''}".lower()
    if not _COUNTS_PEOPLE.search(about) or re.search(r"\b(?:child|depend|kid)", about):
        return updates
    items = [item.strip() for item in _LIST_SEPARATOR.split(reading.digits_for_words(reply).lower().strip(" .!"))]
    items = [part.strip() for item in items for part in _POSSESSIVE_ITEM.split(item)]
    counts = [_people_in(item) for item in items if item]
    if len(counts) < 2 or items[0] not in ("me", "myself", "i"):
        return updates
    for update in list(updates):
        value = update.value
        if (update.node, update.field) != (question.node, question.field) and update.current \
                and isinstance(value, int) and not isinstance(value, bool) \
                and (_spec(schemas, update.node, update.field) or spec).kind == "number":
            unsure.append(Proposal(update.node, update.field, value, update.words,
                                   "a count in a list of the household: another person listed may count too"))
            updates = [u for u in updates if u is not update]
    if None in counts:
        return updates
    total = sum(c for c in counts if c is not None)
    frame = _frame(schemas, question.node, question.field)
    if not check(question.field, spec, total).ok:
        return updates
    kept = [u for u in updates if (u.node, u.field) != (question.node, question.field)]
    # first: its words (the whole list) are blanked before another fact's number is (see _one_number_of_many)
    return [FactUpdate(question.node, question.field, total, temporal=frame, frame=frame, words=reply[:120],
                       reasoning=f"the people listed, counted: {total}"), *kept]


def _counts_people(spec: FieldSchema) -> bool:
    """Whether a number field counts people (a household, occupants, children, dependants)."""
    about = f"{spec.description} {spec.question or ''}".lower()
    return bool(_COUNTS_PEOPLE.search(about) or re.search(r"\b(?:child|depend|kid|occupant|adult|famil)", about))


def _people_in(item: str) -> int | None:
    """How many people one item of a list names ("me" 1, "my wife" 1, "our 2 boys" 2, "the twins" 2), or None."""
    if re.fullmatch(r"me|myself|i|(?:my|our|his|her|their) (?:" + _RELATIVE + r")", item):
        return 1
    if re.fullmatch(r"(?:(?:my|our|the) )?(?:twins|triplets)", item):
        return 2 if item.endswith("twins") else 3
    many = re.fullmatch(r"(?:(?:my|our|his|her|their) )?(\d{1,2}) "
                        r"(?:kids|children|boys|girls|sons|daughters|teenagers)", item)
    return int(many.group(1)) if many else None


_RELATIVE = (r"wife|husband|partner|girlfriend|boyfriend|fiancee?|spouse|mum|mom|mother|dad|father|son|daughter|"
             r"brother|sister|friend|flatmate|housemate|baby|gran|nan|grandad|grandma|grandpa")
#: A field that counts people ("How many people live in your household, you included?").
_COUNTS_PEOPLE = re.compile(r"\b(?:people|household|occupants|persons)\b")
#: A possessive starts a new item of a list written without commas ("me my partner her mum").
_POSSESSIVE_ITEM = re.compile(r"\s(?=(?:my|our|his|her|their)\s)")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s|&\s)?|\s(?:and|&|plus)\s")
#: A number left in a reply once the facts took theirs (a year alone is a date's, not an amount).
_LOOSE_NUMBER = re.compile(r"(?<![\d.,])(?!(?:19|20)\d\d\b)\d[\d,.]*")
#: "i said 2" / "i put 2": a value the person gave before.
_SAID = r"\bi (?:said|told you|put|wrote|gave)\W{1,3}"
_TAKEN_BACK = re.compile(_SAID + r"\d[\d,.]*")
_PERCENT_AFTER = re.compile(r"\s?(?:%|percent\b|per cent\b)")
_TIME_COUNT = re.compile(r"\s?(?:years?|yrs?|months?|weeks?|days?|hours?|am|pm|o'clock|st|nd|rd|th)\b")
#: "more like" correcting the value before it: after "well", "or", "no" ("10, well more like 15"), or owned
#: up to ("more like 15 if i'm honest"); said of a later time ("it'll be more like 58k") it corrects nothing.
_MORE_LIKE = (r"\b(?:well|or|no|actually|honestly|realistically),?\s(?:more like|closer to)\b|"
              r"\bmore like(?=\s~?[$€£]?\d[\d,.]*k?\s(?:if i'?m (?:being )?honest|to be honest|tbh|honestly|"
              r"realistically|truth be told))")
#: Words by which the reader chose one value among several: a total, a correction, a time, a denial.
_SETTLES = re.compile(r"\b(?:so(?=\s(?:like\s|about\s|around\s|roughly\s)?[$€£]?\d)|total|comes to|making|"
                      r"which is|in total|all in|altogether|between us|combined|"
                      r"sorry|i mean|i meant|make (?:that|it)|or rather|scratch that|actually|no wait|not|"
                      r"now|currently|at the moment|these days|used to|was|were|will|'ll|going to|once|next|"
                      rf"from(?=\s(?:[$€£]?\d|next|last|this|now|then|{reading.MONTH}))|until|ago|last|this year)\b|="
                      rf"|{_MORE_LIKE}")
#: A part of the amount the person cannot put a number on.
_OPEN_PART = re.compile(r"\b(?:not sure|(?:i )?(?:don'?t|do not) know|no idea|not certain) "
                        r"(?:how much|what (?:those|that|they|it)"
                        r"(?:'?s| are| is)? worth)\b")
_ADDS = re.compile(r"\b(?:on top|plus|in addition|as well as|extra)\b")
_EVERY_N = re.compile(r"\bevery (?:\d+|other) (?:weeks?|months?)\b|\bfortnight|\bbi-?weekly\b")
_PEOPLE = re.compile(r"\b(?:me|myself)\s?(?:,|and)\s?(?:my|our|the)\b|"
                     r"\bmy (?:wife|husband|partner|girlfriend|boyfriend|mum|mom|dad|son|daughter)\b")


def _spec(schemas: dict[str, NodeSchema], node: str, name: str) -> FieldSchema | None:
    """The schema of ``node``'s field ``name``, if the schemas have it."""
    schema = schemas.get(node)
    return schema.properties.get(name) if schema else None


def _gated(reply: str, schemas: dict[str, NodeSchema], updates: list[FactUpdate],
           unsure: list[Proposal]) -> list[FactUpdate]:
    """Every update through the gates that turn a doubt into a question (:class:`Proposal`)."""
    kept = []
    for update in updates:
        passed = _hedged_option(reply, update, schemas, unsure)
        passed = passed and _whole_name(reply, passed, schemas, unsure)
        if passed is not None:
            kept.append(passed)
    return kept


def _turning(reply: str, question: Question, schemas: dict[str, NodeSchema],
             updates: list[FactUpdate]) -> list[FactUpdate]:
    """"Turning 30 in August": 29 until the birthday, for the present age, which its schema names by the cue
    "turning" (a name says nothing); to a question about a future age ("At what age do you want to retire?")
    the answer is 30 itself, and no present age at all."""
    turning = _TURNING.search(reading.digits_for_words(reply).lower())
    spec = _spec(schemas, question.node, question.field)
    if turning is None or spec is None or question.kind not in _ASKED_KINDS:
        return updates
    said = int(turning.group(1))
    if spec.temporal == "future" and spec.kind == "number":
        return _future_age(question, spec, said, turning.group(), updates)
    now = [u for u in updates if u.value == said and _is_age_now(schemas, u.node, u.field)]
    if _is_age_now(schemas, question.node, question.field):
        now = [u for u in updates if (u.node, u.field) == (question.node, question.field) and u.value != said - 1]
        if not now and any((u.node, u.field) == (question.node, question.field) for u in updates):
            return updates
        now = now or [FactUpdate(question.node, question.field, said, words=turning.group())]
    kept = [u for u in updates if u not in now]
    if _NEXT_YEAR.match(reading.digits_for_words(reply).lower(), turning.end()):
        return kept  # "I'll be 40 next year": 38 or 39 now, so the age is asked again, not guessed
    for update in now[:1]:  # of the present, whatever time the reader gave "next week"
        if check(update.field, _spec(schemas, update.node, update.field) or spec, said - 1).ok:
            kept.append(FactUpdate(update.node, update.field, said - 1, words=turning.group(),
                                   reasoning=f"{turning.group()}: {said - 1} until the birthday"))
    return kept


def _is_age_now(schemas: dict[str, NodeSchema], node: str, name: str) -> bool:
    spec = _spec(schemas, node, name)
    return spec is not None and "turning" in spec.cues and spec.temporal in (None, "present")


def _future_age(question: Question, spec: FieldSchema, said: int, words: str,
                updates: list[FactUpdate]) -> list[FactUpdate]:
    """"When I turn 67" to a future age: 67 answers the question asked; it says nothing of the age now."""
    kept = [u for u in updates if u.words.strip() != str(said) or (u.node, u.field) == (question.node, question.field)]
    if any((u.node, u.field) == (question.node, question.field) for u in kept) or not check(question.field, spec,
                                                                                           said).ok:
        return kept
    return [*kept, FactUpdate(question.node, question.field, said, temporal="future", frame="future", words=words,
                              reasoning=f"{words}: the age asked for")]


#: After "I'll be 40": a birthday in another calendar year, so the age now is not known.
_NEXT_YEAR = re.compile(r"\s*(?:next year|in (?:a|one|two|\d+) years?)\b")
_TURNING = re.compile(r"\b(?:turning|turn|i'll be|ill be|will be)\s(\d{1,3})\b(?!\s(?:years?\s)?ago)")


def _hedged_option(reply: str, update: FactUpdate, schemas: dict[str, NodeSchema],
                   unsure: list[Proposal]) -> FactUpdate | None:
    """An option said with a hedge ("single since the divorce i suppose", "technically self-employed") is
    the person's doubt about which option fits: asked, not stored."""
    spec = _spec(schemas, update.node, update.field)
    if spec is None or spec.kind != "choice" or update.value is None or not update.current \
            or update.source != "user_input" or not _OPTION_HEDGE.search(reply.lower()):
        return update
    unsure.append(Proposal(update.node, update.field, update.value, update.words, "an option said with a doubt"))
    return None


#: A doubt about which option fits (a hedge on a number, "about 60k", is still the number given).
_OPTION_HEDGE = re.compile(r"\b(?:i suppose|technically|sort of|kind of|more or less|on paper|not really|not sure|"
                           r"in a way|might be|maybe|probably|semi|or something)\b")


def _whole_name(reply: str, update: FactUpdate, schemas: dict[str, NodeSchema],
                unsure: list[Proposal]) -> FactUpdate | None:
    """A person's name read with a nickname beside it ("people call me Sam but it's Samantha Ortiz") is
    asked, never picked; the name said again in full later ("it's Kathryn, not Katherine. Kathryn
    Doyle") is the whole name."""
    spec = _spec(schemas, update.node, update.field)
    if spec is None or spec.kind != "text" or not isinstance(update.value, str) or not update.current:
        return update
    lower = reply.lower()
    # A form of the user's own says no kind of text: a short phrase beside "on paper" may be a name too.
    short = spec.text == "person" or (spec.text == "phrase" and len(update.value) <= _SHORT_PHRASE)
    official = _official_name(reply)
    if short and official:
        # "people call me Sam but it's Samantha Ortiz officially", "full name devendra kumar rao": the form
        # asks for the name, and the reply itself says which of its two names is the official one.
        return update if official.casefold() == update.value.casefold() else replace(
            update, value=official, words=official,
            reasoning=f"{update.reasoning}; the name said to be the official one")
    first = _NAME_BEFORE_NICKNAME.match(reply)
    named = text_values.person(first.group(1), lower_ok=True) if first else None
    if first and named and len(named.split()) == len(first.group(1).split()) and not _OTHER_NAME.search(lower) \
            and update.value.casefold().startswith(named.casefold()):
        # "robert mcallister but everyone calls me rab": the name, then what people call the person
        return replace(update, value=named, words=first.group(1),
                       reasoning=f"{update.reasoning}; the name said before the nickname")
    again = _said_again(reply, update.value) if short else None
    if again is not None:
        return replace(update, value=again, words=again, reasoning=f"{update.reasoning}; the name said again in full")
    if short and (_OTHER_NAME.search(lower) or (_NICKNAME.search(lower) and re.search(r"\bbut\b", lower))):
        unsure.append(Proposal(update.node, update.field, update.value, update.words, "a nickname beside the name"))
        return None
    if spec.text != "person":
        return update
    fuller = re.search(rf"\b{re.escape(update.value)}((?:\s[A-Z][\w'’-]{{1,40}}){{1,3}})\b", reply)
    if fuller is None:
        return update
    return replace(update, value=fuller.group(), words=fuller.group(),
                   reasoning=f"{update.reasoning}; the name said again in full")


_SHORT_PHRASE = 40
#: Words that put a second name beside the one read: a name on paper; a nickname "but" another name.
_OTHER_NAME = re.compile(r"\b(?:officially|on paper|legally|(?:full|real|proper|birth|maiden|legal) name)\b")
#: Markers of the official one of two names: the name stands right before "officially", "on paper",
#: "legally", or right after "full name", "legal name", "real name" (a birth or maiden name may be a
#: former one, so it marks nothing).
_OFFICIAL_BEFORE = re.compile(r"\s(?:officially|on paper|legally)\b", re.IGNORECASE)
_OFFICIAL_AFTER = re.compile(r"\b(?:full|legal|real) name(?:'s|\sis|:)?\s", re.IGNORECASE)
#: Words that are never part of a person's name: a name's words stop at one.
_NOT_NAME = frozenset("i i'm im me my it its it's is am are was but and or the a an call calls called people "
                      "name if you need well so on paper though just".split())


def _official_name(reply: str) -> str | None:
    """The one whole name (two to four words) the reply marks as official, or None (none, or two)."""
    found = set()
    for marker in _OFFICIAL_BEFORE.finditer(reply):
        words = re.split(r"[,.;:!?]", reply[:marker.start()])[-1].split()
        run = list(itertools.takewhile(lambda w: w.casefold() not in _NOT_NAME, reversed(words)))[::-1]
        found.add(" ".join(run) if 2 <= len(run) <= 4 else "")
    for marker in _OFFICIAL_AFTER.finditer(reply):
        words = re.split(r"[,.;:!?]", reply[marker.end():])[0].split()
        run = list(itertools.takewhile(lambda w: w.casefold() not in _NOT_NAME, words))
        found.add(" ".join(run) if 2 <= len(run) <= 4 else "")
    names = {n.casefold(): n for n in found if n and all(re.fullmatch(r"[^\W\d_][\w'’-]*", w) for w in n.split())}
    return next(iter(names.values())) if len(names) == 1 and "" not in found else None


def _said_again(reply: str, surname: str) -> str | None:
    """A name said again in full after a mark, ending with the one word read ("its o'connor, siobhan o'connor"):
    the fuller name (one to three words before the same surname), or None."""
    if len(surname.split()) != 1:
        return None
    at = reply.casefold().find(surname.casefold())
    found = re.compile(rf"\s*[,.;:–-]\s*((?:[^\W\d_][\w'’-]*\s){{1,3}}{re.escape(surname)})(?![\w'’-])\W*$",
                       re.IGNORECASE).match(reply, at + len(surname)) if at >= 0 else None
    if found is None or any(w.casefold() in _NOT_NAME for w in found.group(1).split()):
        return None
    named = text_values.person(found.group(1), lower_ok=True)
    return named if named and len(named.split()) == len(found.group(1).split()) else None


#: A whole reply that gives a name, then "but" a nickname ("robert mcallister but everyone calls me rab").
_NAME_BEFORE_NICKNAME = re.compile(
    r"^\s*(?:(?:i'?m|im|it'?s|its|my name'?s|my name is)\s)?([^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*){0,3})\s?,?\s"
    r"but\s(?:(?:everyone|everybody|people|they|friends|most people|my friends|my mates|mates|folks)\s)?"
    r"(?:calls?\sme|(?:i\s)?go\sby|known\sas)\s", re.IGNORECASE)
_NICKNAME = re.compile(r"\b(?:call(?:s|ed)? me|known as|go(?:es)? by|nickname)\b")


def _competing(updates: list[FactUpdate], unsure: list[Proposal], question: Question) -> list[FactUpdate]:
    """A volunteered value with another reading of the same field beside it ("a student ... my part time
    job") is no sure value: both readings are asked."""
    doubted = {(p.node, p.field): p.value for p in unsure}
    out = []
    for update in updates:
        key = (update.node, update.field)
        if key != (question.node, question.field) and key in doubted and doubted[key] != update.value \
                and update.current and update.value is not None:
            continue
        out.append(update)
    return out


def _retracted(reply: str, question: Question, updates: list[FactUpdate],
               unsure: list[Proposal]) -> tuple[list[FactUpdate], list[Proposal]]:
    """The asked field's value read before a correction cue that nothing after it replaced ("Sheffield,
    sorry, Rotherham"): the person took it back, so it is asked, not stored."""
    lower = reading.digits_for_words(reply).lower()  # the words a value keeps are read after number words
    cues = [m.start() for m in _REPLACES.finditer(lower)] + [m.start() for m in patterns.CORRECTION.finditer(lower)]
    key = (question.node, question.field)
    where = {(u.node, u.field): lower.find(u.words.lower()) if u.words else -1 for u in updates}
    words = {(u.node, u.field): u.words for u in updates}
    out = []
    for update in updates:
        at = where[(update.node, update.field)]
        end = at + len(update.words)
        # "yesterday actually, ...": an "actually" right after the value, or ending the reply ("i turned 35 on
        # saturday actually"), affirms it, takes nothing back
        later = [c for c in cues if c > at and not (lower.startswith("actually", c) and (
            lower[end:c].strip(" ,") == "" or not lower[c + len("actually"):].strip(" .!,")))]
        # a correction that went to another field ("1,900. Actually my salary is 58,000"; "29. i actually live
        # in reading now", whose value's words hold the cue itself) takes nothing back
        elsewhere = bool(later) and any(k != key and w >= 0 and w + len(words[k]) > min(later)
                                        for k, w in where.items())
        if (update.node, update.field) == key and update.current and at >= 0 and later and not elsewhere \
                and question.kind in _ASKED_KINDS and update.value is not None:
            day = _day_corrected(update.value, lower[min(later):])
            if day is not None:
                out.append(replace(update, value=day, words=lower[min(later):][:120], is_correction=True,
                                   reasoning=f"{update.reasoning}; the day corrected, its month and year kept"))
                continue
            unsure.append(Proposal(update.node, update.field, update.value, update.words,
                                   "a value said before a correction"))
            continue
        out.append(update)
    return out, unsure


def _not_held(reply: str, inp: ResolverInput, updates: list[FactUpdate]) -> list[FactUpdate]:
    """"im in croydon not london", "it'll be 3 of us not 2": a value said against the one the graph holds
    ("A not <held>") corrects that field, whatever was asked (the person names the held value as the wrong
    one). A place or a person's name, a count or a day; never of another time than the field's. The held
    number after "not" is then no value of any field."""
    out = list(updates)
    for clause in patterns.clauses(reading.digits_for_words(reply)):
        lower, cue = clause.lower(), patterns.temporal_cue(clause.lower())
        for node, name, spec, held in _held_fields(inp):
            said = _said_instead(lower, spec, held)
            frame = _frame(inp.schemas, node, name)
            if said is None or said[0] == held or cue not in (None, "present", frame) \
                    or not check(name, spec, said[0]).ok:
                continue
            if not any((u.node, u.field) == (node, name) and u.current for u in out):
                out.append(FactUpdate(node, name, check(name, spec, said[0]).value, is_correction=True, frame=frame,
                                      temporal=cue or frame, words=said[1],
                                      reasoning=f"{_SAID_INSTEAD} {held!r}: {clause[:80]}"))
            if isinstance(held, int | float):  # "4 of us not 3": the 3 is the wrong held value, no answer
                out = [u for u in out if (u.node, u.field) == (node, name) or u.value != held
                       or u.words.strip() != str(int(held))]
    return out


def _measured(reply: str, inp: ResolverInput, updates: list[FactUpdate]) -> list[FactUpdate]:
    """"5'11, 80kg" to "how tall are you?": a quantity whose unit is of the dimension of one other field of the
    asked node alone (``x-unit``: kg, so the weight) names that field, as a keyword would. Only one such quantity
    in the reply, outside the answer's words, in a clause of no other time than now."""
    schema = inp.schemas.get(inp.question.node)
    if schema is None or inp.question.kind not in _ASKED_KINDS:
        return updates
    text = reading.digits_for_words(reply)
    answer = [u.words for u in updates if (u.node, u.field) == (inp.question.node, inp.question.field) and u.words]
    taken = [(at, at + len(words)) for words in answer if (at := text.find(words)) >= 0]
    out = list(updates)
    for name, spec in schema.properties.items():
        unit = spec.unit
        if unit is None or spec.kind != "number" or name == inp.question.field \
                or any((u.node, u.field) == (inp.question.node, name) for u in out) \
                or sum(units.dimension(str(other.unit)) == units.dimension(unit) for other in schema.properties.values()
                       if other.unit) != 1:
            continue
        found = [q for q in units.quantities(text, unit) if not any(q.start < end and start < q.end
                                                                     for start, end in taken)]
        clause = next((c for c in patterns.clauses(text) if len(found) == 1 and found[0].words in c), "")
        if len(found) != 1 or not clause or patterns.temporal_cue(clause.lower()) not in (None, "present") \
                or _REPLACES.search(clause.lower(), clause.find(found[0].words)):
            continue  # "90 kilos, sorry 88": the bare number after it corrects it, asked
        value = int(found[0].value) if spec.type == "integer" and float(found[0].value).is_integer() \
            else found[0].value
        checked = check(name, spec, value)
        if checked.ok and checked.value is not None:
            out.append(FactUpdate(inp.question.node, name, checked.value, frame=_frame(inp.schemas, schema.title, name),
                                  reasoning=f"names {name.replace('_', ' ')} by its unit: {clause[:80]}",
                                  words=found[0].words))
    return out


#: The reasoning of a value said against the one the graph holds ("3 of us not 2").
_SAID_INSTEAD = "said instead of the held"


def _introduced(reply: str, inp: ResolverInput, updates: list[FactUpdate]) -> list[FactUpdate]:
    """"hey! jen here, 27": a reply that opens with a name and "here" introduces the person, whose own name
    field is the one cued by "my name is" (not a contact's). A relative or a pronoun ("mum here") is no name."""
    found = _HERE.match(reply)
    if found is None or any(w in _NOT_NAME or w in _RELATIVE.split("|") or w in _NOT_INTRODUCED
                            for w in found.group(1).lower().split()):
        return updates
    for node, schema in inp.schemas.items():
        for name, spec in schema.properties.items():
            if spec.text != "person" or "my name is" not in spec.cues or any(
                    (u.node, u.field) == (node, name) for u in updates):
                continue
            value = text_values.person(found.group(1), lower_ok=True)
            if value is not None and check(name, spec, value).ok:
                return [*updates, FactUpdate(node, name, value, words=found.group(),
                                             reasoning=f"introduced as {value!r}: {found.group()}")]
    return updates


def _introduced_age(reply: str, inp: ResolverInput, updates: list[FactUpdate]) -> list[FactUpdate]:
    """"hiya im priya nair, 29, from leicester": a number standing alone right after the name a reply
    introduces ("i'm", "my name is") is the person's age, for the one field of the age now (cued by "turning")."""
    head = reply[:_INTRO_HEAD]  # an introduction opens the reply: number words are read in its head only
    found = _INTRO_AGE.match(reading.digits_for_words(head)) if _INTRO_OPENS.match(head) else None
    if found is not None and len(reply) > len(head) and found.end() >= len(head) - 8:
        found = None  # the head may have cut the number or its words ("forty" of "forty-two")
    named = text_values.person(found.group(1), lower_ok=True) if found else None
    if found is None or named is None or len(named.split()) != len(found.group(1).split()):
        return updates
    ages = [(node, name, spec) for node, schema in inp.schemas.items() for name, spec in schema.properties.items()
            if spec.kind == "number" and _is_age_now(inp.schemas, node, name)]
    if len(ages) != 1 or any((u.node, u.field) == ages[0][:2] for u in updates):
        return updates
    node, name, spec = ages[0]
    checked = check(name, spec, int(found.group(2)))
    if not checked.ok or checked.value is None or not 10 <= int(found.group(2)) <= 110:
        return updates
    return [*updates, FactUpdate(node, name, checked.value, words=found.group(2),
                                 reasoning=f"the number after the name introduced: {found.group()[:80]}")]


_INTRO_HEAD = 120
_INTRO_OPENS = re.compile(r"^\W*(?:\w+(?:\sthere)?\W{1,3})?(?:i'?m|im|i am|my name|name's)\b", re.IGNORECASE)
#: An introduction, a name, then a number alone ("Hi, I'm Dana Reyes, 31, living in Bath").
_INTRO_AGE = re.compile(r"^\W*(?:(?:hi|hey|hello|hiya|heya|morning|good morning|evening|good evening|afternoon|"
                        r"good afternoon)(?:\sthere)?\W{1,3})?(?:i'?m|im|i am|my name is|my name's|name's)\s"
                        r"([^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*){0,3})\s?,\s{0,3}(\d{1,3})"
                        r"(?:\s(?:years old|yrs old|yo))?\s{0,3}(?:[,.!;]|$)", re.IGNORECASE)
#: Words before "here" that are no name ("right here", "we all here").
_NOT_INTRODUCED = frozenset("we us nobody everyone everybody all right over out up down in from".split())
#: A reply's opening "<name> here" (after a greeting): one or two words, nothing else before.
_HERE = re.compile(r"^\s*(?:(?:hi|hey|hello|hiya)\W{1,3})?([^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*)?)\shere\b"
                   r"(?=\s*(?:[,.!;:-]|$))", re.IGNORECASE)


def _held_fields(inp: ResolverInput) -> list[tuple[str, str, FieldSchema, Scalar]]:
    """The graph's held values (no boolean: "yes not no" says nothing), each with its field's schema."""
    out = []
    for node, held_values in inp.values.items():
        schema = inp.schemas.get(node)
        for name, held in held_values.items():
            spec = schema.properties.get(name) if schema else None
            if spec is not None and held is not None and not isinstance(held, bool):
                out.append((node, name, spec, held))
    return out


def _said_instead(lower: str, spec: FieldSchema, held: Scalar) -> tuple[Scalar, str] | None:
    """The value right before "not <held>" in a lower-cased clause, with its words, or None."""
    if spec.kind == "text" and spec.text in ("place", "person") and isinstance(held, str) and held.strip():
        found = re.search(rf"([^,.;:!?]{{1,60}}?)\s(?:and\s)?not\s(?:in\s|the\s)?{re.escape(held.strip().lower())}\b",
                          lower)
        # the value must be said as the person's own ("im in", "it's", or the field's cue): "i work in london
        # not manchester" says nothing of where the person lives
        if found is None or not (_OWN.search(found.group(1)) or any(cue in found.group(1) for cue in spec.cues)):
            return None
        text = _INSTEAD_LEAD.split(found.group(1))[-1]  # "by the way im in york": what follows its last lead
        value = text_values.place(text) if spec.text == "place" else text_values.person(text, lower_ok=True)
        return None if value is None or len(value.split()) > 3 else (value, found.group())
    if spec.kind == "number" and not spec.unit and isinstance(held, int | float) and float(held).is_integer():
        found = re.search(rf"(?<![\d.,])(\d{{1,4}})\s((?:[a-z]+\s){{0,2}})not\s{int(held)}(?![\d.,])", lower)
        # the words between say what is counted: none, people ("3 of us"), or the field's own words
        # ("2 bedrooms not 3" is no count of occupants held at 3)
        own = f"{spec.description} {spec.question or ''}".lower()
        counted = found is not None and all(w in _PEOPLE_WORDS or re.search(rf"\b{re.escape(w[:5])}", own)
                                            for w in found.group(2).split())
        return (int(found.group(1)), found.group()) if found is not None and counted else None
    if spec.kind == "date" and isinstance(held, str) and re.fullmatch(r"\d{4}-\d\d-\d\d", held):
        return _day_instead(lower, held)
    return None


def _day_instead(lower: str, held: str) -> tuple[Scalar, str] | None:
    """"the 21st of march not the 12th" against a held 1988-03-12: the held date on the day said (a month
    named must be the held one: only the day is corrected)."""
    date = datetime.date.fromisoformat(held)
    found = re.search(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\sof\s({reading.MONTH}))?\s(?:and\s)?not\s(?:the\s)?"
                      rf"{date.day}(?:st|nd|rd|th)?\b(?![\d/.-])", lower)
    if found is None or (found.group(2) and _MONTHS.index(found.group(2)[:3]) + 1 != date.month):
        return None
    try:
        return date.replace(day=int(found.group(1))).isoformat(), found.group()
    except ValueError:
        return None


#: Words that say a value is the person's own ("im in croydon", "it's Kathryn").
_OWN = re.compile(r"\b(?:i'm|im|i am|we're|we are|it's|its|it is)\b")
#: The last word that leads to a place or a name before "not <held>" ("im in york", "it's bob").
_INSTEAD_LEAD = re.compile(r"\b(?:in|at|to|is|im|i'm|i am|it's|its|it is|called|me)\s")
#: Words that count people ("3 of us", "4 people"): a count of people held is corrected by them.
_PEOPLE_WORDS = frozenset("of us them people persons adults".split())
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _day_corrected(value: Scalar, after: str) -> str | None:
    """A full date corrected by a day of the month alone ("1st of august. oh hang on no, the 8th"; "actually
    make that the 15th"): the same date on that day, the month and year unchanged (nothing else was
    corrected); None when ``after`` (the reply from the correction on) holds anything else of a date."""
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return None
    days = _ORDINAL_DAY.findall(after)
    if len(days) != 1 or re.search(rf"\b(?:{reading.MONTH})\b|\d[/.-]\d|\b(?:19|20)\d\d\b", after):
        return None
    try:
        return datetime.date.fromisoformat(value).replace(day=int(days[0])).isoformat()
    except ValueError:  # "the 31st" of a month of 30 days: asked as before
        return None


#: A day of the month said alone: "the 8th", "15th", ending its phrase (a bare number could be anything;
#: "the 2nd week", "3rd floor" are no days).
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b(?=\s{0,3}(?:[,.;:!?)]|$|(?:instead|then)\b))")


def _skip(question: Question) -> Resolution:
    if question.kind == "confirm":
        return Resolution(answered=True, reasoning="confirmation skipped: both values kept, the conflict stays open")
    if question.kind == "refresh":
        return Resolution(answered=True, refreshed=(f"{question.node}.{question.field}",),
                          reasoning="refresh skipped: the held value stays as it is")
    skip = FactUpdate(question.node, question.field, None, skipped=True, source="user_skip",
                      reasoning="the user skipped the question")
    return Resolution((skip,), answered=True, reasoning="skipped")


def _frame(schemas: dict[str, NodeSchema], node: str, name: str) -> Temporal:
    """The time a field is about: its ``x-temporal``, else the cue words of its question."""
    schema = schemas.get(node)
    if schema is None or name not in schema.properties:
        return "present"
    return schema.properties[name].temporal or patterns.temporal(schema.question(name).lower())


def _prefer(frame: Temporal) -> reading.Prefer:
    return "past" if frame == "past" else "future" if frame == "future" else "current_period"


def _clauses(reply: str, today: datetime.date, prefer: reading.Prefer,
             asked: tuple[str, str] = ("", ""), held: Scalar | None = None) -> list[_Clause]:
    """The reply's clauses; a correction cue ("Sorry. It's 58,000") holds for the clauses after it too."""
    out = []
    correcting = False
    budget = reading.MAX_REPLY_DATE_SPANS
    for raw in patterns.clauses(reply):
        text = reading.digits_for_words(raw)
        lower = text.lower()
        correcting = correcting or patterns.is_correction(lower)
        found = reading.dates(text, today, prefer, max(budget, 0))
        budget -= len(reading.date_candidates(text))
        spans = sorted(_dated(text, found) + reading.numbers(text, found), key=lambda s: s.start)
        out.append(_Clause(text, lower, patterns.temporal_cue(lower), correcting or patterns.no_longer(lower), spans,
                           reply=reply, today=today, asked=asked, held=held))
    return out


def _dated(text: str, dates: list[Span]) -> list[Span]:
    """A day and month said without a year, right before a year ("march 3rd last year", "the 12th of january
    this year"): one date, that day in that year (two spans would be two values for one field)."""
    out: list[Span] = []
    for span in sorted(dates, key=lambda s: s.start):
        last = out[-1] if out else None
        if last is not None and last.precision == "day" and span.precision == "year" and span.year is not None \
                and isinstance(last.value, str) and not re.search(r"\d{4}", text[last.start:last.end]) \
                and not text[last.end:span.start].strip(" ,"):
            try:
                day = datetime.date.fromisoformat(last.value).replace(year=span.year)
            except ValueError:  # the 29th of february of a year without it: both kept, so asked
                out.append(span)
                continue
            out[-1] = replace(last, value=day.isoformat(), end=span.end, year=span.year)
            continue
        out.append(span)
    return out


def _of_other_time(updates: list[FactUpdate], question: Question) -> bool:
    """Whether the reply so far gave the asked field values of another time only ("i was 90kg in january")."""
    mine = [u for u in updates if (u.node, u.field) == (question.node, question.field) and u.value is not None]
    return bool(mine) and not any(u.current for u in mine)


def _clause_facts(clause: _Clause, inp: ResolverInput, *, answered: bool, doubted: bool = False,
                  other_time: bool = False) -> tuple[list[FactUpdate], list[Rejection], str | None]:
    """Facts of one clause: a life event's values, the named fields' values, then the answer."""
    updates, event = _event_facts(clause, inp.schemas)
    rejected: list[Rejection] = []
    done = {(u.node, u.field) for u in updates}
    question = inp.question
    triggers = _two_options(clause, _triggers(clause, inp.schemas), question)
    for trigger in sorted(triggers, key=lambda t: (t.spec.kind == "text", t.at)):
        if (trigger.node, trigger.field) in done:
            continue
        asked = (trigger.node, trigger.field) == (question.node, question.field)
        if asked and answered and not clause.correction and trigger.how == "choice" \
                and not (doubted and _names_alone(clause, trigger)):
            # the asked field is read first from the reply: a later reading is no correction; but when the first
            # was only a doubt ("on a payroll" in a story), an option said on its own later ("i'm self-employed")
            # is the answer
            continue
        if not asked and other_time and trigger.how == "cue" and trigger.spec.kind in ("money", "number") \
                and trigger.spec.kind == getattr(_spec(inp.schemas, question.node, question.field), "kind", None):
            continue  # "i was 90kg in january, i'm 84 now": the asked field's value of now, not the age's cue's
        story = asked and len(clause.reply) > LONG_REPLY  # in a story even the asked field's option word is asked
        if not asked and not answered and trigger.how == "choice" and trigger.choice is not None \
                and trigger.choice.how == "exact" and _asks_text(inp):
            continue  # "i'm a medium" to "what do you do?": the answer's word, not the risk tolerance's option
        if trigger.how == "choice" and trigger.choice is not None \
                and ((trigger.choice.how == "exact" and not asked) or story) and not _names_alone(clause, trigger):
            clause.claims.append((trigger.at, trigger.end))  # "student" in "my student loan": asked, not stored
            clause.options.add((trigger.at, trigger.end))
            clause.unsure.append(Proposal(trigger.node, trigger.field, trigger.choice.value,
                                          clause.text[trigger.at:trigger.end],
                                          "an option's word, not said as the answer"))
            continue
        if trigger.spec.kind == "text":
            _sibling_date(clause, trigger, inp, done, updates, rejected)
        taken = (set(clause.used), list(clause.claims))
        if asked and trigger.spec.kind in ("money", "number") and (
                trigger.how == "keyword" or (trigger.how == "cue" and clause.correction)):
            # a correction, a sum, several times; after a cue too when the clause corrects ("i'm 41 - sorry, 42")
            value = _number_answer(clause, trigger.spec, question)
        else:
            value = _read(clause, trigger)
        new = clause.used - taken[0]
        if value is None:
            continue
        refused: list[Rejection] = []
        _keep(trigger.node, trigger.field, trigger.spec, value, clause, inp, f"names {trigger.field.replace('_', ' ')}",
              updates, refused)
        if refused and not asked and trigger.how == "keyword":  # a weak tie: leave the value to another keyword
            clause.used, clause.claims = taken
            clause.refused |= new  # another keyword may take it, never the answer to another question
            continue
        rejected += refused
        done.add((trigger.node, trigger.field))
    concludes = bool(_CONCLUDES.search(clause.lower))  # "..., so 1,500 for me": the sum the reply arrives at
    lands = _lands(clause, inp)
    # A correction whose value went to a field it names ("i said 2 kids before but its 3") corrects that field only.
    # An option named in it ("actually make that 1300 to be safe") took no value of the correction's.
    corrects_answer = clause.correction and not [u for u in updates if (spec := _spec(inp.schemas, u.node, u.field))
                                                 is None or spec.kind not in ("choice", "boolean")]
    if (not answered or corrects_answer or concludes or lands) and (question.node, question.field) not in done \
            and question.node in inp.schemas and question.kind != "changes":  # "what changed?" asks no field
        spec = inp.schemas[question.node].properties[question.field]
        value = _answer(clause, spec, question)
        if isinstance(value, str) and spec.kind == "text" and _an_option(value, inp.schemas[question.node]):
            value = None  # "I'm self employed" to "who do you work for?": another field's option, not a name
        measured = bool(spec.unit) and units.names_dimension(clause.words, str(spec.unit))  # "78.4 kg" names it
        if value is not None and len(clause.reply) > LONG_REPLY and not measured and not lands:  # a story: a guess
            clause.unsure.append(Proposal(question.node, question.field, value, (clause.words or clause.text)[:120],
                                          "a value in a long story, not named as the answer"))
            clause.words, clause.others = "", []
        elif value is not None:
            _keep(question.node, question.field, spec, value, clause, inp, "answers the question", updates, rejected)
            for span, when in clause.others:  # "it's 3,100 now, used to be 2,700": 2,700 is kept, as past
                clause.words, clause.when = clause.text[span.start:span.end], when
                _keep(question.node, question.field, spec, _span_value(span, spec.kind, spec.per), clause, inp,
                      f"is of another time ({when})", updates, [])
            clause.others = []
    return updates, rejected, event


def _lands(clause: _Clause, inp: ResolverInput) -> bool:
    """Whether a long story lands on its answer in this clause: a sentence that opens with "so" or "anyway"
    ("so ideally we'd move in on the 29th", "so yeah before tax its the 42,500"), or a clause that ends on
    "so 78", holding one value (said once or more) of the asked number's kind, of the field's time, no condition
    before it; the
    last such clause of the reply only."""
    spec = _spec(inp.schemas, inp.question.node, inp.question.field)
    if len(clause.reply) <= LONG_REPLY or spec is None or spec.kind not in ("money", "number", "year", "date") \
            or clause.lower not in (story := _story_text(clause.reply)):
        return False
    at = story.find(clause.lower)
    sentence = story[max(story.rfind(end, 0, at) for end in ".!?\n") + 1:]  # "so for the right place, we can ..."
    if not (_LANDS.match(sentence) or _CONCLUDES.search(clause.lower)):
        return False
    values = [span for _, span in clause.free(answer=True) if fits(span, spec)]
    frame = _frame(inp.schemas, inp.question.node, inp.question.field)
    if len({span.value for span in values}) != 1 or clause.cue not in (None, frame) \
            or _IF.search(clause.lower[:values[0].start]):  # "78 kilos on the new scales, so 78": one value
        return False
    rest = story[at + len(clause.lower):]
    return not any(_LANDS.match(later) or _CONCLUDES.search(later) for later in re.split(r"[.!?\n]", rest))


@lru_cache(maxsize=8)
def _story_text(reply: str) -> str:
    """The reply as its clauses read it (number words as digits), lower-cased: read once per reply."""
    return reading.digits_for_words(reply).lower()


#: A sentence that opens on what a story comes to ("so ideally ...", "anyway ...", "in the end ...").
_LANDS = re.compile(r"^\s*(?:so|anyway|in the end|all in all|overall)\b(?!\s(?:much|many|far|long|that)\b)")
#: A condition: a value after it is a case, not the answer ("so if it goes up we'd pay 1,200").
_IF = re.compile(r"\b(?:if|unless)\b")


def _an_option(text: str, schema: NodeSchema) -> bool:
    """Whether ``text`` is, whole, an option (or an option's synonym) of one of the node's choice fields."""
    said = normal(text)
    return any(said == normal(word)
               for spec in schema.properties.values() if spec.enum
               for option in spec.enum for word in (option, *spec.synonyms.get(option, ())))


def _asks_text(inp: ResolverInput) -> bool:
    """Whether the question asks a free-text field (its answer may hold any word)."""
    spec = _spec(inp.schemas, inp.question.node, inp.question.field)
    return spec is not None and spec.kind == "text" and inp.question.kind in _ASKED_KINDS


def _two_options(clause: _Clause, triggers: list[_Trigger], question: Question) -> list[_Trigger]:
    """Two options named for the asked field ("either A+ or A-"): with a correction the last stands
    ("married - well, divorced now actually"), else neither, and the first is asked."""
    key = (question.node, question.field)
    options = [t for t in triggers if (t.node, t.field) == key and t.how == "choice" and t.choice is not None]
    if len({t.choice.value for t in options if t.choice is not None}) < 2:
        return triggers
    rest = [t for t in triggers if t not in options]
    if clause.correction:
        return rest + [max(options, key=lambda t: t.at)]
    now = [t for t in options if _NOW_AFTER.match(clause.lower[t.end:])]
    if len(now) == 1 and clause.cue == "future":  # "single for now, getting married in sept": the one of now
        clause.claims += [(t.at, t.end) for t in options if t is not now[0]]
        return rest + now
    first = min(options, key=lambda t: t.at)
    assert first.choice is not None
    clause.claims += [(t.at, t.end) for t in options]
    clause.unsure.append(Proposal(first.node, first.field, first.choice.value, clause.text[:120], "two options"))
    return rest


def _names_alone(clause: _Clause, trigger: _Trigger) -> bool:
    """An option volunteered is sure only when it is said on its own ("..., married, two kids"; "I'm
    retired"), not as a word of something else ("my student loan", "a high street bank")."""
    start = max(clause.text.rfind(",", 0, trigger.at), -1) + 1
    ends = [i for i in (clause.text.find(",", trigger.end),) if i >= 0]
    segment = clause.lower[start:min(ends + [len(clause.text)])]
    rest = (segment[:trigger.at - start] + " " + segment[trigger.end - start:]).strip()
    return bool(_ALONE.fullmatch(rest))


#: What may stand beside an option said on its own: lead words, an article or a count, a describing word
#: or two (the words around the option are stripped, so the last needs no space after it: "a rabbit",
#: "1 small dog"),
#: and an aside that offers the fact ("im A- if you need that", "btw": it names no other thing).
_ALONE = re.compile(r"(?:(?:i'm|i am|im|we're|we are|it's|its|it is|and|now|currently|but|so|well|yes|yeah|yep|yup|"
                    r"(?:i|we) have|(?:i|we)'ve got|(?:i|we) have got|"
                    r"actually|btw|fyi|"
                    r"i'm now|totally|fully|happily)\s{0,3}){0,3}(?:(?:an?|\d{1,2})(?:\s|$))?"
                    r"(?:(?:small|big|little|old|young|lovely|very)(?:\s{1,3}|$)){0,2}"
                    r"(?:\s{0,3}(?:if (?:you need (?:that|it|to know)(?: too)?|that'?s relevant|it helps)|btw|fyi)"
                    r"(?:\s{1,3}(?:too|as well))?)?")


def _keep(node: str, name: str, spec: FieldSchema, value: Scalar, clause: _Clause, inp: ResolverInput, why: str,
          updates: list[FactUpdate], rejected: list[Rejection]) -> None:
    """Check ``value`` against its schema: a fact, or a rejection with its reason."""
    checked = check(name, spec, value)
    if not checked.ok or checked.value is None:
        rejected.append(Rejection(node, name, value, checked.reason))
        return
    frame = _frame(inp.schemas, node, name)
    when = frame if spec.kind in ("date", "year") else clause.when or clause.cue or frame
    if when == "future" and frame == "present" and spec.kind == "boolean" and _WILL_NEED.search(clause.lower) \
            and "need" in f"{name} {spec.question or ''}".lower():
        when = "present"  # "we'll need a parking space" to "do you need one?": the need is now, its use to come
    if frame == "present" and (node, name) == clause.asked and spec.kind in ("number", "text"):
        # "I turned 50 in June", "moved to Tobago last year": what a change came to is so now
        when = _change_time(clause, spec, value, _is_age_now(inp.schemas, node, name)) or when
    if when == "present" and frame == "future" and clause.cue is None:
        when = frame  # a plan's field ("60, or rather 62" to "when do you want to retire?"): unmarked is the plan
    clause.when = None
    now = clause.cue == "present" and bool(_NOW_REPLACES.search(clause.lower))  # "I live in Leeds now": an update
    updates.append(FactUpdate(node, name, checked.value, temporal=when, frame=frame,
                              is_correction=clause.correction or now,
                              reasoning=f"{when} statement that {why}: {clause.text[:80]}",
                              words=(clause.words or clause.text)[:120]))
    clause.words = ""


#: A need said for when the change comes ("we'll need a parking space"): a need of now.
_WILL_NEED = re.compile(r"(?:'ll|\bwill|\bgoing to|\bgonna)\s(?:definitely\s|also\s|still\s)?need\b")


def _change_time(clause: _Clause, spec: FieldSchema, value: Scalar, age: bool) -> Temporal | None:
    """The time of the asked field's value that a change came to: an age right after "turned" is the age now
    ("I turned 50 in June"), but not after a year back ("turned 40 last year": 40 or 41); a place right after
    "moved to" is where the person lives now ("just moved to bath last month"), unless the reply moves on from it
    ("moved to leeds in 2015, then to york"). None: no change said."""
    if age and isinstance(value, int) and re.search(rf"\bturned\s{value}\b", clause.lower):
        return "past" if _YEARS_BACK.search(clause.lower) else "present"
    if spec.kind != "text" or not isinstance(value, str):
        return None
    moved = re.search(rf"\bmoved\s(?:(?:here|up|down|over|back|out)\s)?to\s(?:the\s)?{re.escape(value.lower())}\b",
                      clause.lower)
    if moved is None:
        return None
    story = clause.reply.lower()
    on = story.find(clause.lower)
    later = _MOVED_ON.search(story, on + moved.end()) if on >= 0 else _MOVED_ON.search(clause.lower, moved.end())
    return "present" if len(_MOVE.findall(story)) == 1 and later is None else "past"


#: A year back: an age turned then is no age now.
_YEARS_BACK = re.compile(r"\blast year\b|\bago\b|\b(?:19|20)\d\d\b")
#: A move, and what ends the place it went to ("then", "left", "until").
_MOVE = re.compile(r"\bmov(?:ed|ing|e)\b")
_MOVED_ON = re.compile(r"\b(?:then|left|until|till|before|after that|back to)\b")


def _event_facts(clause: _Clause, schemas: dict[str, NodeSchema]) -> tuple[list[FactUpdate], str | None]:
    """A life event stated in the present or past changes the present; a future one changes nothing yet."""
    found = patterns.events(clause.lower)
    if not found or clause.cue == "future":
        return [], None
    event = found[0]
    updates = []
    for node, schema in schemas.items():
        for name, spec in schema.properties.items():
            if event not in spec.on_event:
                continue
            value: Scalar | None = spec.on_event[event]
            why = f"life event {event}: {clause.text[:80]}"
            if spec.kind in ("money", "number") and not patterns.states_none(clause.lower):
                # "I was made redundant" does not say the income is 0 (notice pay, benefits, a second
                # job): the held value goes to the history and the field is asked again, never assumed
                value, why = None, f"{why}; the held value no longer holds, asked again"
            updates.append(FactUpdate(node, name, value, is_correction=True, confidence=0.95, source=LIFE_EVENT,
                                      reasoning=why))
    return updates, event


def _triggers(clause: _Clause, schemas: dict[str, NodeSchema]) -> list[_Trigger]:
    """Every place the clause names a field: keywords, cues, enum values and synonyms (exact only)."""
    out = []
    for node, schema in schemas.items():
        for name, spec in schema.properties.items():
            implied = implied_keywords(name, spec) if node == clause.asked[0] and not spec.keywords else ((), ())
            if (node, name) == clause.asked:
                implied = (implied[0], ())  # the answer itself is read as one, corrections and all ("10, well 15")
            for how, words in (("keyword", spec.keywords or implied[0]), ("cue", spec.cues), ("per", implied[1])):
                for word in words:
                    at = patterns.keyword_at(clause.lower, word)
                    cue = patterns.CORRECTION.match(clause.lower, at) if at >= 0 else None
                    if at >= 0 and not (cue and cue.end() > at + len(word)):  # "make that 1300": a correction's word
                        out.append(_Trigger(at, at + len(word), node, name, spec, how))
            if spec.kind == "choice":
                kin = _with_kin(spec) if node == clause.asked[0] else spec
                out += [_Trigger(m.start, m.end, node, name, kin, "choice", m)
                        for m in find_choices(kin, clause.lower, near=False)
                        if not patterns.negated(clause.lower[max(0, m.start - 16): m.start])
                        and not _POSSESSIVE.match(clause.lower, m.end)  # "my mum's friend" is not the mum
                        # a relation word names the relation asked, or leads a name asked ("my mum, Linda Baxter");
                        # "only my husband does" to "do you smoke?" names no contact
                        and (kin is spec or m.how == "exact" or name == clause.asked[1]
                             or (not clause.lower[:m.start].strip() and _asks_a_name(schemas, clause.asked)))]
    return out


#: The words for a relation, for a form's options that name one without synonyms ("sibling" for "my sister").
_KIN = {"partner": ("husband", "wife", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancee", "other half"),
        "parent": ("mum", "mom", "mother", "dad", "father", "mam", "mummy", "mommy", "daddy"),
        "child": ("son", "daughter"), "sibling": ("brother", "sister"),
        "friend": ("best friend", "mate", "best mate", "pal")}
#: A relation word owned by another ("my mum's friend"): no relation of the person's own.
_POSSESSIVE = re.compile(r"(?:'|’)?s?(?:'|’)s?\b")


def _with_kin(spec: FieldSchema) -> FieldSchema:
    """A choice of relations on a form of a user's own ("partner", "parent", "sibling"), with no synonyms: "my
    husband", "my mum", "my sister" name them (with "my": "a sister" or "sisters" is no one's relation)."""
    if spec.synonyms or not spec.enum or not any(option in _KIN for option in spec.enum):
        return spec
    return _kin_copy(spec, tuple(spec.enum))


def _asks_a_name(schemas: dict[str, NodeSchema], asked: tuple[str, str]) -> bool:
    spec = _spec(schemas, *asked)
    return spec is not None and spec.kind == "text" and spec.text != "place"


_KIN_COPIES: dict[tuple[int, tuple[str, ...]], FieldSchema] = {}


def _kin_copy(spec: FieldSchema, enum: tuple[str, ...]) -> FieldSchema:
    key = (id(spec), enum)
    if key not in _KIN_COPIES or _KIN_COPIES[key].enum != spec.enum:
        if len(_KIN_COPIES) > 256:
            _KIN_COPIES.clear()
        synonyms = {option: [f"my {word}" for word in _KIN[option]] for option in enum if option in _KIN}
        _KIN_COPIES[key] = spec.model_copy(update={"synonyms": synonyms})
    return _KIN_COPIES[key]


#: Words of a field's name that name no subject of their own ("pet_type", "move_in_date", "parking_needed").
_NAME_FILLER = frozenset({"a", "an", "the", "of", "to", "in", "at", "on", "per", "is", "has", "have", "needed", "need",
                          "available", "type", "kind", "name", "date", "day", "days", "week", "month", "year", "years",
                          "months", "last", "current", "previous", "monthly", "annual", "yearly", "weekly", "length",
                          "number", "amount", "total", "first", "full", "new", "old", "move", "count", "value"})


@lru_cache(maxsize=1024)
def _implied(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = name.lower().split("_")
    words = [w for w in parts if len(w) > 2 and w not in _NAME_FILLER]
    out: list[str] = []
    for word in words:
        out.append(word)
        if word.endswith("ies"):
            out.append(word[:-3] + "y")
        elif word.endswith("s") and not word.endswith("ss"):
            out.append(word[:-1])
    per = next((parts[i + 1] for i in range(len(parts) - 1) if parts[i] in ("per", "a") and parts[i + 1] in _PERIODS),
               None)
    return tuple(dict.fromkeys(out)), tuple(f"{lead} {per}" for lead in ("a", "per", "each", "every")) if per else ()


#: The periods a field's name may count per ("cigarettes_per_day").
_PERIODS = ("day", "week", "month", "year")


def implied_keywords(name: str, spec: FieldSchema) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A form of a user's own names no keywords ("parking_needed" as written): the words of a field's own name
    are its keywords then, when it names no cue either and is no choice (whose options name it), and a count
    per a period ("cigarettes_per_day") is the number said right before "a day". Only for the asked node's form:
    another form's name may name the same thing ("smoker" and "smokers")."""
    if spec.cues or spec.enum or spec.kind == "text":
        return (), ()
    keywords, per = _implied(name)
    return keywords, per if spec.kind in ("number", "money") else ()


def _sibling_date(clause: _Clause, trigger: _Trigger, inp: ResolverInput, done: set[tuple[str, str]],
                  updates: list[FactUpdate], rejected: list[Rejection]) -> None:
    """A date said within a phrase ("I want to get married next year") goes to the phrase's node's one
    date or year field, when the node has exactly one and the reply did not fill it: the cue and the
    value's type make it unambiguous. The phrase then stops before it."""
    if trigger.spec.text != "phrase" or trigger.how == "answer":
        return
    schema = inp.schemas[trigger.node]
    dated = [name for name, spec in schema.properties.items() if spec.kind in ("date", "year")]
    if len(dated) != 1 or (trigger.node, dated[0]) in done:
        return
    spec = schema.properties[dated[0]]
    index = next((i for i, span in clause.free() if span.kind == "date" and span.start >= trigger.end), None)
    if index is None:
        return
    span = clause.take(index, *_bounds(clause, index))
    done.add((trigger.node, dated[0]))
    _keep(trigger.node, dated[0], spec, _span_value(span, spec.kind), clause, inp, "dates the goal", updates, rejected)


def _read(clause: _Clause, trigger: _Trigger) -> Scalar | None:
    """The value a trigger gives its field (and what of the clause it takes), or None."""
    kind = trigger.spec.kind
    if kind == "choice":
        if trigger.choice is None:
            return None
        clause.claims.append((trigger.at, trigger.end))
        clause.options.add((trigger.at, trigger.end))
        if _WAS.search(clause.lower[max(0, trigger.at - 24):trigger.at]):
            clause.when = "past"  # "was married, hes passed now": the option of another time
        elif _NOW_AFTER.match(clause.lower[trigger.end:]):
            clause.when = "present"  # "i was a nurse for 30 years, retired now": the option's own time
        elif _OVER.search(clause.lower) and not _NOW_REPLACES.search(clause.lower):
            clause.when = "past"  # "we dont have pets anymore, the cat died": the option of what ended
        return trigger.choice.value
    if kind == "boolean":
        clause.claims.append((trigger.at, trigger.end))
        if _PARTLY.search(clause.lower) or _PARTLY.search(clause.reply.lower()):
            return None  # "partly, we have a joint account for bills": neither yes nor no
        before = clause.lower[max(0, trigger.at - 24): trigger.at]
        return not (patterns.negated(before) or patterns.no_longer(clause.lower))
    if kind == "text":
        return _text_after(clause, trigger)
    span = _cue_span(clause, trigger) if trigger.how == "cue" else _near_span(clause, trigger)
    if span is None:
        return 0 if kind == "money" and patterns.no_longer(clause.lower) else None
    return _span_value(span, kind, trigger.spec.per)


#: Right after an option: it is of the present, whatever time the rest of the clause speaks of ("working
#: full time till then": until a future change, so now).
_NOW_AFTER = re.compile(r"\s{0,3}(?:now|these days|nowadays|at the moment|currently|for now|(?:till|until) then)\b")
#: Right after a value: it is of the present, whatever else the clause says of other times.
_NOW_RIGHT_AFTER = re.compile(r"\s{0,3}(?:right now|now|at the moment|currently|these days|nowadays|as of now|"
                              r"at present)\b")
#: A clause that says something ended ("we dont have pets anymore"): an option in it is of the past.
_OVER = re.compile(r"\b(?:anymore|any more|no longer|any longer)\b")
#: Right before an option: it is of the past ("was married, hes passed now").
_WAS = re.compile(r"\b(?:was|were|used to be|previously)\s(?:an?\s)?$")


def fits(span: Span, spec: FieldSchema) -> bool:
    """Whether a span can be a value of ``spec``'s kind (an amount for money, a plain number for a count, ...)."""
    kind = spec.kind
    if kind in ("year", "date"):  # a date, or a bare four-digit number (its bounds are the schema's to check)
        return span.year is not None or (span.kind == "number" and isinstance(span.value, int)
                                          and 1000 <= span.value <= 9999 and not span.money and not span.percent)
    if span.kind != "number":
        return False
    if kind == "money":
        return not span.percent
    return (not span.money or spec.format == "money") and (not span.percent or (spec.maximum or 1e9) <= 100)


_PER_YEAR = {"year": 1, "month": 12, "week": 52}


def _span_value(span: Span, kind: str, per: str | None = None) -> Scalar:
    """A span as a value of ``kind``; an amount given per another period than the field's (``x-per``)
    is converted ("4k a month" for a yearly income: 48000)."""
    if kind == "year":
        return span.year if span.year is not None else int(span.value)
    if kind == "date" and span.kind == "number":
        return str(span.value)
    if kind == "money" and per and span.per in _PER_YEAR and span.per != per and isinstance(span.value, int | float):
        value = round(span.value * _PER_YEAR[span.per] / _PER_YEAR[per], 2)
        return int(value) if float(value).is_integer() else value
    return span.value


def _cue_span(clause: _Clause, trigger: _Trigger) -> Span | None:
    """The value right after a cue ("I'm 41"), only fillers between."""
    for index, span in clause.free():
        gap = clause.text[trigger.end:span.start] if span.start >= trigger.end else ""
        if span.end > trigger.end and fits(span, trigger.spec) and _CUE_GAP.match(gap):
            return clause.take(index, trigger.at, span.end)
    return None


def _near_span(clause: _Clause, trigger: _Trigger) -> Span | None:
    """The nearest value of the field's kind around a keyword (one before it counts double its distance)."""
    best: tuple[int, int] | None = None
    for index, span in clause.free():
        if not fits(span, trigger.spec):
            continue
        if (trigger.node, trigger.field) != clause.asked and (
                _CORRECTS.search(clause.lower[max(0, span.start - 20):span.start])
                or _CORRECTED.match(clause.lower[span.end:span.end + 20])):
            continue  # "60, or rather 62, the state pension moved": both are the answer's, not the pension's
        if _SAID_BEFORE.search(clause.lower[max(0, span.start - 16):span.start]):
            continue  # "i said 2 kids before but its 3": the value taken back is no reading of the keyword
        if (trigger.node, trigger.field) != clause.asked and _alternative(clause, span):
            continue  # "6 or 12 months, whatever you offer": one of two values offered is the answer's doubt
        if trigger.spec.kind == "year" and span.kind == "number" and (trigger.node, trigger.field) != clause.asked \
                and not check(trigger.field, trigger.spec, _span_value(span, "year")).ok:
            continue  # "before tax its 3400": a number no year of the field could be is no year, only an amount
        if trigger.how == "per" and clause.lower[span.end:trigger.at].strip():
            continue  # "10 a day": a count per a period is the number right before it ("8 hours a day" is none)
        if trigger.spec.kind == "money" and _TIME_UNIT.match(clause.lower, span.end):
            continue  # "6 weeks rent": a length of time, no amount
        after, before = span.start - trigger.end, trigger.at - span.end
        distance = (0 if span.overlaps(trigger.at, trigger.end) else after if 0 <= after <= KEYWORD_AFTER
                    else 2 * before if 0 <= before <= KEYWORD_BEFORE else None)
        if distance is not None and (best is None or distance < best[0]):
            best = (distance, index)
    if best is None:
        return None
    span = clause.spans[best[1]]
    return clause.take(best[1], min(trigger.at, span.start), max(trigger.end, span.end))


#: Two values offered as alternatives: "6 or 12", "£900 or £950".
_OR_AFTER = re.compile(r"\s{0,3}(?:%|k\b)?\s{0,3}or\s{1,3}[$€£₹]?\d")
_OR_BEFORE = re.compile(r"\d[k%]?\s{1,3}or\s{1,3}[$€£₹]?$")


def _alternative(clause: _Clause, span: Span) -> bool:
    """Whether the value is one of two offered as alternatives ("6 or 12 months"): neither is sure."""
    return bool(_OR_AFTER.match(clause.lower, span.end) or _OR_BEFORE.search(clause.lower[:span.start]))


def _text_after(clause: _Clause, trigger: _Trigger) -> str | None:
    """Free text after a keyword or cue, up to where another field's part of the clause starts."""
    # the asked field's phrase holds another field's option word ("pay off the car loan"): its claim ends nothing
    asked = (trigger.node, trigger.field) == clause.asked
    end = min([start for start, stop in clause.claims if start >= trigger.end
               and not (asked and (start, stop) in clause.options)] + [len(clause.text)])
    value = _text_value(clause.text[trigger.end:end], trigger.spec, lower_ok=True)
    if value is not None:
        clause.claims.append((trigger.at, end))
    return value


def _text_value(text: str, spec: FieldSchema, *, lower_ok: bool) -> str | None:
    limit = min(spec.max_length or MAX_TEXT_VALUE, MAX_TEXT_VALUE)
    if spec.text == "person":
        return text_values.person(text, lower_ok=lower_ok)
    if spec.text == "place":
        return text_values.place(text)
    return text_values.phrase(text, limit)


def _answer(clause: _Clause, spec: FieldSchema, question: Question) -> Scalar | None:
    """What is left of a clause after the named fields took their part, read as the answer."""
    kind = spec.kind
    if kind in ("money", "number", "year", "date"):
        return _number_answer(clause, spec, question)
    if question.kind in ("confirm", "refresh") and patterns.yes_no(clause.lower) is not None:
        return None  # "yes" / "no" to "which is right?" is not the value itself (see confirmation)
    if kind == "boolean":
        if _PARTLY.search(clause.lower):
            clause.unsure.append(Proposal(question.node, question.field, True, clause.text[:120], "partly"))
            return None
        yes = patterns.yes_no(clause.lower)
        if yes is None and _USED_TO.search(clause.lower) and _ENDED.search(clause.lower) \
                and not _RESUMED.search(clause.reply.lower()):
            # "i used to, not anymore", "used to smoke but stopped in 2019": the habit is over, so the
            # present answer is no (the past one is the clause's own time, not the field's)
            clause.when = "present"
            return False
        if yes is None and _ONLY_SOMEONE.match(clause.lower) and _ANYONE.search(question.text.lower()):
            return True  # "only my wife does, outside" to "does anyone who will live there smoke?"
        conclusion = _CONCLUSION.search(clause.lower) or _BUT_YES.search(clause.lower)
        if yes is None and conclusion:  # "we had a dog but he passed last year, so no": the answer it ends on
            # "well the bank does lol but yes, mortgage": the yes after "but" answers, the joke before it not
            clause.when = "present"
            return patterns.yes_no(conclusion.group(1))
        return yes
    if kind == "choice":
        masked = _masked(clause)
        # "we don't keep a dog any more": an option said as not had is no answer, as for a named option
        match = next((m for m in find_choices(spec, masked, near=True)
                      if patterns.is_correction(clause.lower)  # "wait no its A-": that no takes back the one before
                      or not patterns.negated(clause.lower[max(0, m.start - 16):m.start])), None)
        if match is not None and _NOW_AFTER.match(clause.lower[match.end:]):
            clause.when = "present"  # "i was a nurse for 30 years, retired now": the option's own time
        elif match is not None and _OVER.search(clause.lower) and not _NOW_REPLACES.search(clause.lower):
            clause.when = "past"
        return None if match is None else match.value
    # "my sister, jo whitfield": a relation that opens the clause leads the name after it, ends nothing
    claims = [(start, end) for start, end in clause.claims if not ((start, end) in clause.options
                                                                   and not clause.text[:start].strip()
                                                                   and clause.lower.startswith("my ", start))]
    before = min([start for start, _ in claims] + [len(clause.text)])
    if (claims and spec.text != "person") or _REFUSAL.search(clause.lower) \
            or len(clause.reply) > MAX_TEXT_ANSWER_REPLY:
        return None  # free text after named facts would be guessed, not read; "I'd rather not" is no name
    fixes = [m.end() for m in _REPLACES.finditer(clause.lower[:before])]
    if fixes and spec.text != "phrase":  # "Sheffield, sorry, Rotherham, just outside sheffield": the name after
        corrected = next((part.strip() for part in _TEXT_PARTS.split(clause.text[fixes[-1]:before])
                          if _CAPITALISED.match(part)), None)
        if corrected is None:
            return None
        clause.words = corrected
        return _text_value(corrected, spec, lower_ok=False)
    if spec.text == "phrase" and _EMPLOYER.search(f"{spec.description} {spec.question or ''}".lower()):
        work = _WORK_VERB.search(clause.lower, 0, before)
        if work is not None and work.group().endswith("worked"):  # "worked at asda for years": a past employer
            clause.unsure.append(Proposal(question.node, question.field, clause.text[:120].strip(), clause.text[:120],
                                          "work of the past"))
            return None
        if work is not None:
            return _employer_after(clause, work.end(), before, spec, question)
    # a name comes first: "I'm Dana Reyes, thirty-one, living in Bath" (the city was taken by its cue)
    text = _TEXT_TIME.sub("", _ANSWER_LEAD.sub("", clause.text[:before], count=1))
    if spec.text == "place":  # "down in st ives": the place starts after its lead, not at "down"
        text = _TEXT_TIME.sub("", text_values.without_place_lead(text))  # the lead gone, "currently" may start it
        two = _TWO_PLACES.match(text.split(",")[0])
        if two:  # "single bedroom flat in leeds", "Stratford in London": which one is the answer is asked
            said = two[1] if _CAPITALISED.match(two[1]) else two[2]
            clause.unsure.append(Proposal(question.node, question.field, text_values.place(said) or said.strip(),
                                          clause.text[:120], "a place beside another"))
            return None
    if spec.text != "phrase" or (spec.max_length or MAX_TEXT_VALUE) <= 120:
        text = _TEXT_END.split(text)[0]  # a name, a town, an employer ends at its comma ("Swindon now, moved for work")
    value = _text_value(text, spec, lower_ok=True)
    if isinstance(value, str) and any(clause.text[d.start:d.end].lower() in value.lower() for d in clause.spans
                                      if d.kind == "date" or _ORDINAL.match(clause.lower, d.end)):
        return None  # "my birthday is the 9th" to "which town?": a day is no name, and no town
    if value is not None:
        clause.words = text.strip()
        at = clause.lower.find(value.lower())
        if at >= 0 and _NOW_AFTER.match(clause.lower, at + len(value)):
            clause.when = "present"  # "london for now but moving to reading next month": the place of now
    return value


def _employer_after(clause: _Clause, start: int, end: int, spec: FieldSchema, question: Question) -> str | None:
    """The employer in a reply that says the work ("i work behind the bar at the dog and duck"): what follows
    the first "at" or "for" after the work verb, to the end of its phrase; without one, or when it says no
    employer ("for myself", "for 3 years"), the answer is asked, never the sentence stored."""
    at = _AT_FOR.search(clause.lower, start, end)
    rest = clause.text[at.end():end] if at else ""
    if at is not None and not _NO_EMPLOYER.match(rest.lower()):
        text = _TEXT_END.split(_TEXT_TIME.sub("", rest))[0]  # "i work for Sainsbury's now"
        value = _text_value(text, spec, lower_ok=True)
        if value is not None:
            clause.words = text.strip()
            return value
    said = text_values.phrase(clause.text[:end], min(spec.max_length or MAX_TEXT_VALUE, MAX_TEXT_VALUE))
    if said is not None:
        clause.unsure.append(Proposal(question.node, question.field, said, clause.text[:120],
                                      "work said without whom it is for"))
    return None


#: A field that asks for an employer ("The applicant's employer", "Who do you work for?").
_EMPLOYER = re.compile(r"\b(?:employer|work for|works for|company you work)\b")
#: The person's work said as a verb ("i work", "im working", "i do the night shifts").
_WORK_VERB = re.compile(r"(?:\b(?:i|we)(?:'m|m| am|'re| are|'ve been|ve been| have been)?\s|^\s*)(?:work|works|working|"
                        r"worked|do|doing)\b")
_AT_FOR = re.compile(r"\s(?:at|for)\s")
#: What follows "for" or "at" that is no employer: oneself, a time, an amount.
_NO_EMPLOYER = re.compile(r"\s*(?:\d|myself|me\b|my ?self|my own|yourself|free\b|nothing|a living|money|cash|now\b|"
                          r"the (?:last|past)\b|a (?:few|couple|while|bit|year|month|week)\b|about\b|around\b|over\b|"
                          r"ages\b|years\b|months\b|weeks\b|home\b|night|the moment)")
#: A place answer that names two ("single bedroom flat in leeds"): the thing, then where it is.
_TWO_PLACES = re.compile(r"^\s*(\S.{0,60}?)\s(?:in|near)\s(\S.{0,60}?)\s*$")
#: Where a short free-text answer ends: a comma, a dash, "in kent", "from leeds", a time.
_TEXT_END = re.compile(r",|\s[-–]\s|\s(?:in|near|not|from|since|until|but)\s|"
                       r"\s(?:last|next|this)\s(?:week|month|year)\b")  # "glasgow last week from edinburgh"
#: A habit of the past, and the words that say it ended ("used to, stopped 2 yrs ago"; "quit" alone may
#: be a job's, so both are needed).
_USED_TO = re.compile(r"\bused to\b")
_ENDED = re.compile(r"\b(?:not any ?more|no longer|stopped|quit|gave (?:it |that )?up)\b")
#: A habit taken up again after it stopped ("quit in may, started again last week"): no "no" is read.
_RESUMED = re.compile(r"\b(?:again|back on|relapsed|restarted)\b")
#: A yes or no the clause ends on, after "so" ("..., so no"): what the person concludes.
_CONCLUSION = re.compile(r"\bso,?\s(yes|yeah|no|nope)\W*$")
_BUT_YES = re.compile(r"\bbut,?\s(yes|yeah|yep|no|nope)\b(?!\s(?:longer|more|one|idea|way|problem|worries))")
#: Someone else than the person answers a question about anyone ("only my wife does", "just my partner is").
_ONLY_SOMEONE = re.compile(r"^\s*(?:only|just)\s(?:my|our|the|his|her)\s(?:\w+\s){0,2}(?:does|do|is|has)\b")
_ANYONE = re.compile(r"\b(?:anyone|anybody|someone|somebody|any of)\b")
_PARTLY = re.compile(r"^\s*(?:partly|partially|sort of|kind of|sometimes|some of|half)\b")
#: Right before a value: it corrects the value just given ("or rather 62").
_CORRECTS = re.compile(r"(?:sorry|i meant|i mean|make (?:that|it)|or rather|scratch that|no wait|actually)[\s,]{0,3}$")
_CORRECTED = re.compile(r"[\s,]{0,3}(?:sorry|i meant|i mean|no,? make (?:that|it)|or rather|scratch that|no wait)\b")
#: Right before a value the person takes back ("i said 2 kids before but its 3").
_SAID_BEFORE = re.compile(_SAID + "$")
#: Right after a number, it is an ordinal: a day or a place in a row, never an amount or a count.
_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b")
#: Right after a number the person denies ("52 was wrong, it's 25,000"): no candidate.
_DENIED = re.compile(r"\s{0,2}(?:was|is|'s|were)\s(?:wrong|a typo|a mistake|incorrect|not right)\b")
#: Right after a number: it counts something other than money ("3 months", "2 kids").
_COUNTED = re.compile(r"\s{0,2}(?:months?|years?|weeks?|days?|kids?|children|people|times)\b")
#: A clause that states the result of what came before ("so 1,500 for me").
_CONCLUDES = re.compile(r"\bso\s(?:like\s|about\s|around\s|roughly\s)?[$€£]?\d")
_TEXT_PARTS = re.compile(r",|\s[-–]\s")
#: A name or a place written as one: capitalised words only ("John Park", "Rotherham").
_CAPITALISED = re.compile(r"^\s*[A-Z][\w'’.-]{0,40}(?:\s{1,2}[A-Z][\w'’.-]{0,40}){0,4}\s*$")
#: A refusal is not an answer.
_REFUSAL = re.compile(r"\b(?:rather not|prefer not|not telling|won't say|none of your)\b|"
                      r"^\W*(?:why|what|how|who)\b[^?]{0,60}\?|"  # a question back ("why does that matter?")
                      r"\bwhy (?:does|do|would|is|are) (?:that|it|this|you)\b"
                      r"|\bwhat(?:'s| is| does) it (?:to|matter)\b")
#: Words of time around a free-text answer ("still glasgow", "birmingham now").
_TEXT_TIME = re.compile(r"^\s*(?:still|currently|at the moment|right now)\s"
                        r"|\s(?:now|these days|at the moment|currently|nowadays)\b", re.IGNORECASE)


#: A whole answer that says the amount is none ("nothing at the moment", "zero, i'm between jobs").
_NOTHING = re.compile(r"^\s*(?:nothing|none|nil|zero|zilch|not a (?:penny|cent|thing)|no income|no money)\b")
#: A value said after these replaces the ones before it ("68 kilos, sorry I meant 72"; "4, no make that 5").
_REPLACES = re.compile(r"\b(?:sorry|i meant|i mean|make (?:that|it)|or rather|scratch that|actually|no wait|"
                       r"correction|hang on|hold on|oh wait)\b|\*|\bno,?\s(?=\d)|"
                       rf"{patterns.TAKEN_BACK}|{_MORE_LIKE}")
#: A value said after these is the sum the reply arrives at ("1,200 plus 300, so 1,500"; "= 10000").
_TOTAL_BEFORE = re.compile(r"\b(?:so|total(?: of)?|comes to|making|which is)\b|=")
_TOTAL_AFTER = re.compile(r"^\s{0,2}(?:in total|all in|altogether|total|between us|all together|combined)\b")
#: Two values offered for one ("2 or 3", "between 75 and 80", "6-12"): the person is unsure, so is the agent.
_HEDGE = re.compile(r"\b(?:(?<!more )or(?! so\b| thereabouts\b| less\b)|either|between|maybe(?=\s\d)|depending|depends|"
                    r"somewhere(?=\s(?:between|around|about|near|in the|from))|early|late|mid|"
                    r"couple|few|several|half|quarter|quarters|dozen|odd)\b|\d\s?-\s?\d|\d0s\b|"
                    r"\bplus\b|\bdue\b|\d\s?-?\s?something\b")  # "400 something": 400 to 499
_BIRTH = re.compile(r"\bbirth|\bborn\b")
_NEXT_WEEKDAY = re.compile(r"\bnext\s(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")
#: A part of a year said before it: the year is sure, only the day in it is not.
_PART_OF_YEAR = re.compile(r"\b(?:early|late|mid)[\s-]{1,2}(?=(?:19|20)\d\d\b)")
_DESCRIBES = re.compile(r"\b(?:all|both|each|they'?re|they are)\s(?:under|over|below|above|aged)\s$")
_CURRENCY = re.compile(r"[$€£₹¥]|\b(?:usd|eur|gbp|inr|dollars?|euros?|pounds?|rupees?)\b")
_CURRENCY_OF = {"$": "usd", "dollar": "usd", "€": "eur", "euro": "eur", "£": "gbp", "pound": "gbp", "₹": "inr",
                "rupee": "inr"}
#: An amount that is not the field's as said: net of tax, or a period that does not convert exactly.
_NET = re.compile(r"\b(?:take home|takes home|take-home|net|after tax)\b")
#: A date written with two numbers that could each be the month ("04/08/2026").
_AMBIGUOUS_DATE = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.]\d{2,4}$")
#: Said right before a value, the time it is of ("used to be 2,700"; "from 11k"; "will be 4"); "before tax"
#: (or deductions) says what an amount is of, not when ("3k a month before tax so 36k a year").
_BEFORE_PAST = re.compile(r"\b(?:used to(?: be)?|was|were|from|previously|before(?!\s(?:tax|deductions))|"
                          r"last (?:year|month|week)|started(?: off| out)?(?: at)?|originally|initially|began at)"
                          r"\W{0,3}(?:\w+\W{1,3}){0,2}$")
_BEFORE_NOW = re.compile(r"\b(?:this year|now|these days|at the moment|currently|nowadays)"
                         r"\W{0,3}(?:[\w']+\W{1,3}){0,4}$")
_MORE_LIKE_RE = re.compile(_MORE_LIKE)
_BEFORE_FUTURE = re.compile(r"\b(?:will|'ll|going to|once|should be|goes up to|rising to|up to|more like|"
                            r"aim(?:ing)? (?:for|at)|hoping for|hope to (?:get to|be|hit)|target(?: is| of)?|"
                            r"goal(?: is| of)?|want to (?:get to|be|hit)|trying to get (?:to|down to))"
                            r"\W{0,3}(?:\w+\W{1,3}){0,2}$")
#: Said right after a value ("3,100 now"; "11k two years ago"; "40 in august", "4 once my mum moves in").
_AFTER_PAST = re.compile(r"^\W{0,3}(?:\w+\W{1,3}){0,2}?(?:ago|last (?:year|month|week)|in (?:19|20)\d\d)\b")
_AFTER_FUTURE = re.compile(rf"^\W{{0,3}}(?:\w+\W{{1,3}}){{0,2}}?(?:next (?:year|month|week)|by next|once|"
                           rf"in (?:{reading.MONTH})|from (?:{reading.MONTH}|next))\b")


def _number_answer(clause: _Clause, spec: FieldSchema, question: Question) -> Scalar | None:
    """The value of the asked number field in a clause, read with confidence, or a :class:`Proposal` kept
    on the clause (and None): a correction's value wins; the sum the reply arrives at wins; of values of
    different times the present one; one value alone. Anything else is asked, not guessed."""
    if spec.kind == "number" and (spec.unit or _counted_in(spec)):
        measured = spec if spec.unit else spec.model_copy(update={"unit": _counted_in(spec)})
        return _quantity_answer(clause, measured, question)
    candidates = [(i, span) for i, span in clause.free(answer=True) if fits(span, spec)
                  and not (spec.kind == "money" and _COUNTED.match(clause.lower[span.end:span.end + 16]))
                  and not _DENIED.match(clause.lower, span.end)
                  and not _ORDINAL.match(clause.lower, span.end)  # "make it the 4th": a day, no amount
                  # "three, all under ten": a bound that describes what was counted, no second count
                  and not _DESCRIBES.search(clause.lower, 0, span.start)
                  and not (spec.kind in ("money", "number") and _year_of_a_time(clause, span))]  # "til 2028": no rate
    candidates = _gross_of_net(clause.lower, spec, candidates)
    if not candidates and spec.kind == "money" and _NOTHING.match(clause.lower):
        clause.words = clause.text.strip()[:120]  # "nothing at the moment" to "how much do you earn?"
        return 0
    if not candidates:
        return None
    chosen, why = _pick(clause, candidates)
    if chosen is not None and len(candidates) > 1 and clause.when is None:
        clause.when = _span_time(clause, clause.spans[chosen], candidates)  # its own words' time, not the clause's
    if chosen is not None and clause.when is None and _NOW_RIGHT_AFTER.match(clause.lower, clause.spans[chosen].end):
        clause.when = "present"  # "around 9k right now but should be cleared by next summer": today's value
    if chosen is not None:
        why = _doubt(clause, clause.spans[chosen], spec)
        chosen = None if why else chosen
    scaled = None if chosen is None or spec.kind != "money" else _unscaled(clause.spans[chosen], candidates)
    if scaled is not None and chosen is not None:  # "52k, hang on ... its 55 now": 55,000, asked, not 55 stored
        clause.used.add(chosen)
        clause.unsure.append(Proposal(question.node, question.field, scaled, clause.text[:120],
                                      "an amount said without the scale of the one beside it"))
        return None
    if chosen is None:
        index, span = candidates[0]
        clause.used.add(index)
        clause.unsure.append(Proposal(question.node, question.field, _span_value(span, spec.kind, spec.per),
                                      clause.text[:120], why))
        return None
    return _span_value(clause.take(chosen, *_bounds(clause, chosen)), spec.kind, spec.per)


def _counted_in(spec: FieldSchema) -> str | None:
    """The time unit a count without ``x-unit`` is in when its keyword is that unit's name ("months" for the
    months a fund covers): "half a year" is 6 of them, "a full year" 12."""
    units_named = {word.rstrip("s") for word in spec.keywords if word.rstrip("s") in ("day", "week", "month", "year")}
    return units_named.pop() if len(units_named) == 1 else None


def _gross_field(spec: FieldSchema) -> bool:
    """Whether a money field is before tax ("Yearly income before tax")."""
    return spec.kind == "money" and bool(_GROSS.search(f"{spec.description} {spec.question or ''}".lower()))


def _marked(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """Whether the words right around a value (to the comma before it and after it) match ``pattern``."""
    before = text[max(0, start - 24):start].rsplit(",", 1)[-1]
    after = text[end:end + 24].split(",", 1)[0]
    return bool(pattern.search(before) or pattern.search(after))


def _gross_of_net(lower: str, spec: FieldSchema, candidates: list[tuple[int, Span]]) -> list[tuple[int, Span]]:
    """For a field before tax, the one amount said before tax when every other is said after it ("2.8k a
    month in my account, before tax its 3400 a month"); else the candidates as they are."""
    if len(candidates) < 2 or not _gross_field(spec):
        return candidates
    gross = [(i, s) for i, s in candidates if _marked(_GROSS, lower, s.start, s.end)]
    net = [(i, s) for i, s in candidates if _marked(_NET_MARK, lower, s.start, s.end)]
    return gross if len(gross) == 1 and len(net) == len(candidates) - 1 and gross[0] not in net else candidates


#: Words of an amount before tax, and of one after it (paid into an account).
_GROSS = re.compile(r"\b(?:before tax|pre-?tax|gross|before deductions)\b")
_NET_MARK = re.compile(r"\b(?:take home|takes home|take-home|net|after tax|after deductions|in hand|"
                       r"(?:in|into) my (?:acct|account|bank)|hits my|lands in)\b")


def _year_of_a_time(clause: _Clause, span: Span) -> bool:
    """A bare year said after a word of time ("fixed til 2028", "since 2019"): a date's, no amount or count."""
    return span.kind == "number" and not span.money and not span.percent and isinstance(span.value, int) \
        and 1900 <= span.value <= 2100 and bool(_TIME_BEFORE_YEAR.search(clause.lower, max(0, span.start - 8),
                                                                          span.start))


#: A word of time right before a year ("til 2028", "until 2030", "since 2019").
_TIME_BEFORE_YEAR = re.compile(r"\b(?:til|till|until|since|by|from|before|after)\s$")


def _unscaled(span: Span, candidates: list[tuple[int, Span]]) -> int | None:
    """The chosen bare amount times 1,000 when another amount beside it was said in thousands and
    the two are alike that way ("52k ... its 55 now"), else None."""
    if span.money or not isinstance(span.value, int | float) or not 0 < span.value < 1000:
        return None
    scaled = int(span.value * 1000)
    return next((scaled for _, other in candidates if other is not span and other.money
                 and isinstance(other.value, int | float) and 0.5 <= scaled / max(other.value, 1) <= 2), None)


def _doubt(clause: _Clause, span: Span, spec: FieldSchema) -> str:
    """Why a single value read for the asked field is still not sure ('' when it is)."""
    words = clause.text[span.start:span.end]
    ambiguous = _AMBIGUOUS_DATE.match(words.strip())
    if spec.kind == "date" and span.kind == "date" and not re.search(r"(?:19|20)\d\d|\b(?:to|yester)", words) \
            and _BIRTH.search(f"{spec.description} {spec.question or ''}".lower()):
        return "a date of birth without its year"
    if spec.kind == "date" and _NEXT_WEEKDAY.search(words.lower()) and isinstance(span.value, str) \
            and (datetime.date.fromisoformat(span.value) - clause.today).days < 7 \
            and datetime.date.fromisoformat(span.value).weekday() > clause.today.weekday():  # later this week
        return "'next' may be this week's or the week after"
    if spec.kind == "date" and ambiguous and ambiguous[1] != ambiguous[2] and max(map(int, ambiguous.groups())) <= 12:
        return "day and month could be either way round"
    if spec.kind == "money" and span.per == "hour":
        return "an amount per hour"
    if spec.kind == "money" and _NET.search(clause.lower) and not (_gross_field(spec) and _marked(
            _GROSS, clause.lower, span.start, span.end)):  # "2k take home, 2,600 before tax": the gross one is sure
        return "an amount after tax"
    if spec.kind == "money" and spec.per and span.per and span.per != spec.per and spec.per != "year" \
            and "week" in (span.per, spec.per):  # a month is no whole number of weeks: 250 a week is no monthly sum
        return f"an amount per {span.per} for a field per {spec.per}"
    return ""


def _quantity_answer(clause: _Clause, spec: FieldSchema, question: Question) -> Scalar | None:
    """The asked field's quantity in its unit (``x-unit``: "11 stone 4" for kg is 71.67); a bare number
    is the field's only when the clause names a unit of its dimension, else it is asked."""
    unit = str(spec.unit)
    found = units.quantities(clause.text, unit)
    candidates = [(i, span) for i, span in clause.free(answer=True) if fits(span, spec)]
    if found:
        fixes = [m.end() for m in _REPLACES.finditer(clause.lower)]
        after = [q for q in found if fixes and q.start >= fixes[-1]]
        bare = [s for _, s in candidates if fixes and s.start >= fixes[-1] and not any(
            s.overlaps(q.start, q.end) for q in found)]
        if not after and bare and found[-1].unit and isinstance(bare[0].value, int | float):
            clause.words = clause.text[bare[0].start:bare[0].end]  # "68 kilos, sorry I meant 72": 72 kilos
            return units.convert(float(bare[0].value), found[-1].unit, unit)
        if not after and len(found) == 1 and found[0].unit:
            read, carried = _carried_unit(clause, found[0], candidates, spec, question)
            if read:
                return carried
        agree = max(q.value for q in found) <= min(q.value for q in found) * 1.02  # "165 cm, about 5'5"
        hedged = _HEDGE.search(_without_dates(clause).replace(found[0].words.lower(), " "))
        if (len(found) == 1 or agree) and not hedged or after:
            quantity = (after or found)[0]
            clause.used |= {i for i, span in candidates if span.overlaps(quantity.start, quantity.end)}
            clause.claims.append((quantity.start, quantity.end))
            clause.words = quantity.words
            return int(quantity.value) if spec.type == "integer" and float(quantity.value).is_integer() \
                else quantity.value
        clause.unsure.append(Proposal(question.node, question.field, found[0].value, clause.text[:120],
                                      "two quantities for one field"))
        return None
    said = _reply_quantities(clause.reply, unit)
    if candidates and said and clause.correction and isinstance(candidates[0][1].value, int | float):
        span = clause.take(candidates[0][0], *_bounds(clause, candidates[0][0]))  # "six months. actually no, 12"
        return units.convert(float(span.value), said[-1].unit, unit)
    if not candidates or (said and clause.cue != "present"):
        return None  # a quantity with its unit elsewhere in the reply is the answer, not a bare number here
    chosen, why = _pick(clause, candidates)
    near_held = isinstance(clause.held, int | float) and chosen is not None \
        and isinstance(clause.spans[chosen].value, int | float) \
        and abs(float(clause.spans[chosen].value) - float(clause.held)) <= 0.3 * abs(float(clause.held))
    if chosen is not None and (_reply_names_unit(clause.reply, unit) or near_held  # "76 now" after 80 kg held
                               or units.dimension(unit) == units.dimension("month")):
        # a duration is mostly given in the unit its question expects ("12" for a lease in months)
        return _span_value(clause.take(chosen, *_bounds(clause, chosen)), spec.kind, spec.per)
    index, span = candidates[0]
    clause.used.add(index)
    clause.unsure.append(Proposal(question.node, question.field, _span_value(span, spec.kind), clause.text[:120],
                                  why or f"a number without its unit ({unit})"))
    return None


def _carried_unit(clause: _Clause, quantity: units.Quantity, candidates: list[tuple[int, Span]], spec: FieldSchema,
                  question: Question) -> tuple[bool, Scalar | None]:
    """A quantity said with its unit beside bare numbers of its size: the unit carries to them ("was 92kg at
    xmas, down to 86 now, aiming for 80"), and the one value of the present among values of other times is
    the answer; with no single present one, the first is asked (None). ``(False, None)``: no number beside it."""
    unit = str(spec.unit)
    bare = [(i, s) for i, s in candidates if not s.overlaps(quantity.start, quantity.end)
            and isinstance(s.value, int | float) and not isinstance(s.value, bool)]
    if not bare or not all(0.5 <= units.convert(float(s.value), quantity.unit, unit) / max(quantity.value, 1e-9) <= 2
                           for _, s in bare):
        return False, None
    times = {i: _span_time(clause, s, candidates) for i, s in candidates}
    present = [i for i, when in times.items() if when == "present"]
    clause.used |= {i for i, _ in candidates}
    if len(present) != 1:
        clause.unsure.append(Proposal(question.node, question.field, quantity.value, clause.text[:120],
                                      "two values for one field"))
        return True, None
    span = clause.spans[present[0]]
    clause.claims.append((span.start, span.end))
    clause.when = "present"
    if span.overlaps(quantity.start, quantity.end):
        clause.words, value = quantity.words, quantity.value
    else:
        clause.words, value = clause.text[span.start:span.end], units.convert(float(span.value), quantity.unit, unit)
    return True, int(value) if spec.type == "integer" and float(value).is_integer() else value


@lru_cache(maxsize=32)
def _reply_quantities(reply: str, unit: str) -> tuple[units.Quantity, ...]:
    """The whole reply's quantities of ``unit``'s dimension (read once per reply)."""
    return tuple(units.quantities(reading.digits_for_words(reply), unit))


@lru_cache(maxsize=32)
def _reply_names_unit(reply: str, unit: str) -> bool:
    """Whether the whole reply names a unit of ``unit``'s dimension (read once per reply)."""
    return units.names_dimension(reading.digits_for_words(reply), unit)


def _pick(clause: _Clause, candidates: list[tuple[int, Span]]) -> tuple[int | None, str]:
    """Which candidate answers (its index), or None with why not."""
    lower = clause.lower
    for fix in reversed([m.end() for m in _REPLACES.finditer(lower)]):  # the last correction with a value after it
        after = [(i, s) for i, s in candidates if s.start >= fix]
        if after and len(candidates) > 1:
            return after[0][0], ""
    totals = [m.end() for m in _TOTAL_BEFORE.finditer(lower)]
    # "$85,000 USD": a sign and a code of one currency are one currency
    signs = {_CURRENCY_OF.get(m.group().rstrip("s"), m.group()) for _, s in candidates
             for m in _CURRENCY.finditer(lower[s.start:s.end])}
    if len(signs) > 1:
        return None, "amounts in two currencies"
    if len(candidates) > 1 and any(_alternative(clause, s) for _, s in candidates):
        return None, "one of two values offered"  # "so 40 or 50": no total, a choice the person did not make
    if len(candidates) > 1:
        numbers = [o for o in clause.spans if o.kind == "number"]
        first = candidates[0][1]
        if numbers and numbers[0] is first and not _SUBTRACTS.search(lower) \
                and _sum_of_the_rest(first.value, [o.value for o in numbers[1:]]):
            return candidates[0][0], ""  # "1800 - that's 1100 rent and 700 for the rest": stated, then broken down
        after = [(i, s) for i, s in candidates if totals and s.start >= totals[-1]]
        summed = [(i, s) for i, s in candidates if _TOTAL_AFTER.match(lower[s.end:s.end + 20])]
        if summed or after:
            return (summed or after)[-1][0], ""
        times = {i: _span_time(clause, s, candidates) for i, s in candidates}
        present = [i for i, when in times.items() if when == "present"]
        if len(present) == 1:
            clause.when = "present"
            clause.others = [(clause.spans[i], when) for i, when in times.items() if i != present[0]]
            return present[0], ""
        return None, "two values for one field"
    concluded = _CONCLUDES.search(lower)
    if concluded and concluded.start() <= candidates[0][1].start < concluded.end() \
            and not _HEDGE.search(_without_dates(clause)[concluded.start():]):
        return candidates[0][0], ""  # "about half a pack so 10ish": the doubt is the reckoning, the value its end
    if _HEDGE.search(_PART_OF_YEAR.sub(" ", _without_dates(clause))):  # "early 2028" is still in 2028
        return None, "a value said with a doubt"
    return candidates[0][0], ""


def _without_dates(clause: _Clause) -> str:
    """The clause lower-cased with its dates blanked ("2030-06-01" is no range), and "give or take"
    (an approximate value is still the value given)."""
    chars = list(clause.lower.replace("give or take", "            "))
    for span in clause.spans:
        if span.kind == "date":
            chars[span.start:span.end] = " " * (span.end - span.start)
    return "".join(chars)


def _span_time(clause: _Clause, span: Span, candidates: list[tuple[int, Span]]) -> Temporal:
    """The time the words right before ``span`` (from the value before it) and right after it (to
    the next comma or value) name."""
    starts = [s.end for _, s in candidates if s.end <= span.start]
    ends = [s.start for _, s in candidates if s.start >= span.end]
    # back to the value before, or 32 characters: a time cue and the four words _BEFORE_NOW allows after it
    before = clause.lower[max(starts + [span.start - 32, 0]):span.start].rsplit(",", 1)[-1]
    after = clause.lower[span.end:min(ends + [span.end + 24])].split(",", 1)[0]
    if _BEFORE_NOW.search(before) or any(m.end() <= span.start and not clause.lower[m.end():span.start].strip(" ~$€£")
                                         for m in _MORE_LIKE_RE.finditer(clause.lower)):
        return "present"  # "this year it'll be more like 58k" is this year's; "10, well more like 15" corrects
    if _BEFORE_FUTURE.search(before) or _AFTER_FUTURE.search(after):
        return "future"
    if _BEFORE_PAST.search(before) or _AFTER_PAST.search(after):
        return "past"
    return "present"


def _bounds(clause: _Clause, index: int) -> tuple[int, int]:
    span = clause.spans[index]
    return span.start, span.end


def _masked(clause: _Clause) -> str:
    """The clause with the parts other fields took blanked out."""
    chars = list(clause.lower)
    for start, end in clause.claims:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def has_answer(updates: list[FactUpdate], question: Question) -> bool:
    """Whether ``updates`` hold the asked field's value (of the field's own time)."""
    return any(u.node == question.node and u.field == question.field and u.current for u in updates)


def _last_per_field(updates: list[FactUpdate]) -> list[FactUpdate]:
    """One update per field and time: the last thing said wins within a reply."""
    kept: dict[tuple[str, str, str], FactUpdate] = {}
    for update in updates:
        kept[(update.node, update.field, update.temporal)] = update
    return list(kept.values())


def with_conflicts(updates: list[FactUpdate], values: dict[str, dict[str, Scalar | None]],
                   question: Question | None = None) -> list[FactUpdate]:
    """Flag current values that contradict the graph without a correction cue (the answer to the
    question just asked replaces the held value: the person was asked for it now)."""
    out = []
    for update in updates:
        current = values.get(update.node, {}).get(update.field)
        asked = question is not None and question.kind in _ASKED_KINDS \
            and (update.node, update.field) == (question.node, question.field)
        contradicts = (update.current and not update.is_correction and not update.skipped and not asked
                       and current is not None and current != update.value)
        out.append(replace(update, conflict=True) if contradicts else update)
    return out


def confirmation(reply: str, question: Question,
                 updates: list[FactUpdate]) -> tuple[list[FactUpdate], int | None, tuple[str, ...]]:
    """The answer to "which is right?" or "is it still ...?": a value corrects; "yes" keeps the newer
    (or the held) value; "no" restores the older one (to a refresh: the field is asked again)."""
    if question.kind not in ("confirm", "refresh"):
        return updates, None, ()
    key = (question.node, question.field)
    if has_answer(updates, question):
        return [replace(u, is_correction=True) if (u.node, u.field) == key else u for u in updates], None, ()
    answer = patterns.yes_no(reply.lower())
    if question.kind == "refresh":
        return updates, None, (f"{question.node}.{question.field}",) if answer is True else ()
    if answer is True:
        return updates, question.conflict, ()
    if answer is False and question.old is not None:
        back = FactUpdate(question.node, question.field, question.old, is_correction=True, source="confirmation",
                          reasoning="the user confirmed the earlier value")
        return [*updates, back], None, ()
    return updates, None, ()


def reasoning(updates: list[FactUpdate], shift: str | None, keep: int | None, rejected: list[Rejection] | None = None,
              refreshed: tuple[str, ...] = (), unsure: list[Proposal] | None = None) -> str:
    """What the resolver made of the reply, in one line (each value with the words it was read from)."""
    parts = [f"{u.node}.{u.field}={u.value!r} ({u.temporal}{', correction' if u.is_correction else ''}"
             f"{', conflict' if u.conflict else ''}{'' if u.current else ', history only'})"
             + (f" from {u.words!r}" if u.words else "") for u in updates]
    parts += [f"{p.node}.{p.field}={p.value!r}? not stored ({p.why}): to confirm" for p in unsure or []]
    parts += [f"{r.node}.{r.field}={r.value!r} refused: {r.reason}" for r in rejected or []]
    parts += [f"{key} confirmed as held" for key in refreshed]
    if keep is not None:
        parts.append(f"conflict {keep} confirmed: newer value kept")
    if shift:
        parts.append(f"priority shift: {shift}")
    return "; ".join(parts) or "nothing understood"
