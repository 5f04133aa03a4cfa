"""The deterministic reading of a reply's cues: clauses, yes/no, skip, corrections, time, life events.

Values (numbers, amounts, dates) are read by libraries in :mod:`agents.intake.reading`.

A reply is hostile text (the user, or whoever wrote the script). Every pattern here is
linear: no nested quantifiers, no alternation under a repeat, bounded repetition counts;
the caller caps a reply's length first (:data:`MAX_REPLY_CHARS`). The cues (corrections,
temporal words, life events) are the seed's examples made into word lists.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

# Longest reply read (the reply box's bound); the rest is cut (and the cut said in the transcript).
from agents.ports.replies import MAX_REPLY_CHARS as MAX_REPLY_CHARS

#: Most clauses one reply is split into.
MAX_CLAUSES = 40

#: Words a new statement starts with ("..., and I live in Porto"; not "find a job and keep the house").
_SUBJECT = r"(?:i|i'm|i've|i'd|i'll|im|my|we|we're|we've|our|he|she|they|it's|there's|me|mine|now|then)\b"
#: Sentence ends (a period not inside a number such as 1.2); ", and" / " but " / "," before a new statement.
_CLAUSE_SPLIT = re.compile(
    rf"(?:[;!?\n]|(?<!\s[A-Z])\.(?!\d))+|,\s{{0,3}}(?:and|but|so|plus)\s(?={_SUBJECT})"
    rf"|\s(?:and|but|although|though|so|while|plus)\s(?={_SUBJECT})|,\s{{0,3}}(?={_SUBJECT})", re.IGNORECASE)
_SKIP = re.compile(
    r"^\s{0,5}(?:skip(?: (?:it|this|that))?|pass|n/?a|next|prefer not to (?:say|answer)|"
    r"i'?d rather not(?: say)?|rather not say|don'?t know|i don'?t know|no idea|not sure)\s{0,5}[.!]?\s{0,5}$"
)
_YES = re.compile(r"^\s{0,5}(?:yes|yeah|yep|yup|y|sure|correct|right|true|of course|definitely|absolutely|i do|i am|"
                  r"that's right|the new one|"
                  r"the latest|the second one)\b")
_NO = re.compile(r"^\s{0,5}(?:no|nope|nah|n|false|not any ?more|not really|never|i don'?t|i do not|i'?m not|"
                 r"i am not|none|"
                 r"the old one|the earlier one|the first one)\b")
_NEGATION = re.compile(r"\b(?:no|not|don'?t|do not|doesn'?t|haven'?t|have no|never|without|none)\b")
#: A value taken back and replaced in one clause ("i said 2 kids before but its 3").
TAKEN_BACK = r"\bi (?:said|told you)\b.{0,40}\bbut (?:it'?s|its|it is)\b"
CORRECTION = re.compile(
    r"\b(?:actually|sorry|i meant|i mean|make that|or rather|scratch that|correction|i was wrong|to correct|mistake|"
    r"let me correct|hang on|hold on|wait(?=[,!.]|\s(?:no|sorry|actually|i mean)))\b"
    rf"|{TAKEN_BACK}"
)
_NO_LONGER = re.compile(r"\b(?:no longer|not anymore|not any more|any longer)\b")
_FUTURE = re.compile(
    r"\b(?:will|won'?t|going to|gonna|plan to|planning to|expect to|hope to|getting married|"
    r"next (?:week|month|year|spring|summer|autumn|fall|winter)|"
    r"soon|in the future|from next|(?:i|we|she|he) (?:start|begin))\b|'ll\b"
)
_PAST = re.compile(r"^\s{0,3}(?:was|were)\b|"  # "was 70kg last summer": the subject left out, as people type
                   r"\b(?:used to|previously|formerly|last (?:year|month)|years? ago|in the past|before that|"
                   r"back then|at the time|(?<!\bif )(?:i|it|we|he|she|they) (?:was|were)|when (?:was|were|did)|"
                   r"originally|initially|at first|"
                   r"started (?:off |out )?at(?= [$€£₹]?\d))\b")  # "started at 25k, now 14,300"
_NOW = re.compile(r"\b(?:now|currently|these days|nowadays|at the moment|today|this year)\b")
#: Life events that change the present at once and shift priorities (the seed's "job loss").
_EVENTS = {
    "job_loss": re.compile(r"\b(?:lost my job|laid off|got fired|was fired|been fired|unemployed|"
                           r"out of work|lost my income|no income|no longer (?:working|employed))\b"),
    "bankruptcy": re.compile(r"\b(?:bankrupt|bankruptcy)\b"),
    "new_child": re.compile(r"\b(?:had a baby|new baby|baby on the way|expecting a baby|pregnant)\b"),
}
EVENT_NAMES = tuple(_EVENTS)
#: A clause that says the event's value itself ("no income", "earning nothing"): nothing is assumed.
_STATED_NONE = re.compile(r"\b(?:no|zero|nil) (?:income|salary|pay|earnings|wages?)\b|\bnot earning\b|"
                          r"\bearn(?:ing)? nothing\b|\bnothing coming in\b|\blost my income\b")


def states_none(clause: str) -> bool:
    """The clause says outright that there is no income (what a job loss declares)."""
    return bool(_STATED_NONE.search(clause))


def clauses(text: str) -> list[str]:
    """The reply cut into clauses (at most :data:`MAX_CLAUSES`), as written, without blanks."""
    parts = (part.strip() for part in _CLAUSE_SPLIT.split(text))
    return [part for part in parts if part][:MAX_CLAUSES]


def is_skip(text: str) -> bool:
    """The whole reply asks to skip the question."""
    return bool(_SKIP.match(text.lower()))


def yes_no(clause: str) -> bool | None:
    """True for a yes, False for a no, None for neither (``clause`` lower-cased)."""
    if _NO.match(clause):
        return False
    if _YES.match(clause):
        return True
    return None


def negated(clause: str) -> bool:
    """The clause says no, not, never ... (a boolean field mentioned in it is False)."""
    return bool(_NEGATION.search(clause))


def is_correction(text: str) -> bool:
    """The user corrects something said before ("actually", "sorry", "I meant")."""
    return bool(CORRECTION.search(text))


def no_longer(clause: str) -> bool:
    """The clause ends a fact ("no longer", "not anymore")."""
    return bool(_NO_LONGER.search(clause))


def temporal(clause: str) -> Literal["past", "present", "future"]:
    """``future`` ("will", "next month"), ``past`` ("used to", "last year") or ``present``."""
    return temporal_cue(clause) or "present"


def temporal_cue(clause: str) -> Literal["past", "present", "future"] | None:
    """The time a clause's words name (``future``, ``past``, ``present``: "now", "currently"), or None."""
    if _FUTURE.search(clause):
        return "future"
    if _PAST.search(clause):
        return "past"
    if _NOW.search(clause):
        return "present"
    return None


def events(clause: str) -> list[str]:
    """The life events the clause states (``job_loss``, ``bankruptcy``, ``new_child``)."""
    return [name for name, pattern in _EVENTS.items() if pattern.search(clause)]


def keyword_at(clause: str, keyword: str) -> int:
    """Where ``keyword`` (a word or phrase, matched on word boundaries) starts in ``clause``; -1 if absent."""
    if keyword not in clause:  # most keywords are absent: no pattern needed
        return -1
    match = _keyword_pattern(keyword).search(clause)
    return match.start() if match else -1


@lru_cache(maxsize=4096)
def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(keyword)}(?!\w)")
