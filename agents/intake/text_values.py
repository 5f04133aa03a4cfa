"""Free text where the sentence's meaning stops: a person's name, a place, a phrase.

- a **person** (``x-text: person``): the capitalised words right after the cue ("My name is
  Maria Silva and I'm 41" → "Maria Silva"), with the particles names have between them
  ("Ana de Sousa", "Ludwig van Beethoven"); typed all in lower case, at most three words before
  a stop word, capitalised;
- a **place** (``x-text: place``): the same for a place name ("I live in Porto with my wife" →
  "Porto"; "Newcastle upon Tyne", "Rio de Janeiro");
- a **phrase** (``x-text: phrase``, the default): from the cue to the end of its clause, but no
  further than a part of the clause that another field took ("I want to buy a flat in Porto by
  2030" → "buy a flat in Porto", the year going to its own field), without the words that only
  join it to what followed ("by", "and", "with").
"""

from __future__ import annotations

import re

from agents.intake.reading import MONTH

MAX_WORDS = 5
_TOKEN = re.compile(r"[^\W\d_][\w'’.-]{0,40}")
_NAME_PARTICLES = frozenset({"de", "da", "do", "dos", "das", "del", "della", "di", "du", "van", "von", "der", "den",
                             "la", "le", "bin", "ibn", "al", "el", "ben", "y", "e"})
_PLACE_PARTICLES = frozenset({"de", "da", "do", "dos", "das", "del", "di", "du", "la", "le", "upon", "on", "sur",
                              "am", "an", "of", "the", "en", "im", "in"})
#: Words that end a lower-case name or place ("i live in porto with my wife").
_STOP = frozenset({"and", "but", "with", "since", "for", "because", "where", "near", "so", "while", "though",
                   "although", "which", "who", "when", "i", "i'm", "im", "my", "we", "our", "by", "at", "now",
                   "currently", "these", "this", "that", "area", "city", "town", "as", "right", "too",
                   "also", "nowadays", "today", "years", "year", "is", "was", "am", "are", "it", "it's",
                   "from", "last", "next"})
#: Words that only join a phrase to what came after it; cut from its end.
_TRAILING = re.compile(r"(?:[\s,;:-]+|\b(?:by|and|with|in|at|for|to|so|that|until|before|from|of|the|a|an|"
                       r"or|but|then|around|about|on)\b)+$", re.IGNORECASE)
_PLACE_LEAD = re.compile(r"^\s*(?:(?:down|up|over|out|back|based|living|live)\s+in\s+)?"
                         r"(?:(?:the\s+)?(?:city|town|village|suburbs?|outskirts|centre|center)\s+of\s+)?",
                         re.IGNORECASE)
_LEADING = re.compile(r"^(?:[\s,;:-]+|\b(?:is|was|to|be|that|a|an)\b)+", re.IGNORECASE)

#: A lower-case "the" before a capitalised name is the sentence's, not the name's ("the Student Loans
#: Company"); "The Hague", written with a capital, keeps it.
_ARTICLE = re.compile(r"^the\s+(?=[A-Z])")

def person(text: str, *, lower_ok: bool) -> str | None:
    """The name at the start of ``text`` (see the module doc), or None."""
    named = _capitalised(text, _NAME_PARTICLES)
    if named and named.split()[0].lower() in _GREETINGS:
        return None  # "Hiya", "Morning": a greeting is never a name
    if named or not lower_ok:
        return named
    lower = _lower_words(text, 3)
    return None if lower is None or lower.split()[0].lower() in _NO_NAME else lower


#: What follows "i'm" when it is no name ("i'm fine thanks", "i'm not sure"): a lower-case reply that
#: starts so is asked again, not stored as a name.
_NO_NAME = frozenset({"fine", "good", "ok", "okay", "well", "great", "alright", "thanks", "thank", "sorry", "not",
                      "here", "ready", "back", "busy", "tired", "happy", "hello", "hi", "hey", "sure", "yes", "no",
                      "yeah", "nope", "just", "doing", "called", "spelled", "spelt", "unsure", "confused"})
#: Greetings, never a name ("hiya", "morning").
_GREETINGS = frozenset({"hi", "hey", "hello", "hiya", "heya", "howdy", "yo", "hallo", "greetings", "morning",
                        "afternoon", "evening", "g'day", "gday", "good"})
_NO_NAME = _NO_NAME | _GREETINGS


def place(text: str) -> str | None:
    """The place name at the start of ``text`` (see the module doc), or None; a time phrase ends it
    ("sheffield in april", "Leeds last year", "bristol back in 2019")."""
    text = _TIME_PHRASE.split(without_place_lead(text), maxsplit=1)[0]
    return _capitalised(text, _PLACE_PARTICLES) or _lower_words(text, 3)


#: A time phrase after a place ("in april", "last year", "in 2019", "3 years ago"): the place ends before it.
_TIME_PHRASE = re.compile(
    rf"\s(?:(?:back|way back|only|just)\s)?(?:in|since|during|from|until|till|around|by|before|after|over)\s"
    rf"(?:(?:early|late|mid|the)[\s-])?(?:{MONTH}|(?:19|20)\d\d|spring|summer|autumn|fall|winter|christmas|xmas|"
    rf"easter|new year|the (?:new year|end|start|beginning))\b|"
    rf"\s(?:last|next|this|that)\s(?:week|month|year|spring|summer|autumn|fall|winter|weekend|{MONTH})\b|"
    r"\s(?:\d+|a|an|one|two|three|four|five|six|a few|a couple of)\s(?:days?|weeks?|months?|years?)\sago\b|"
    r"\s(?:yesterday|recently|lately)\b", re.IGNORECASE)


def without_place_lead(text: str) -> str:
    """``text`` without the words that lead to a place ("down in st ives", "the city of Porto")."""
    return _PLACE_LEAD.sub("", text)


def phrase(text: str, limit: int) -> str | None:
    """``text`` as a phrase: leading and trailing joining words removed, at most ``limit`` characters."""
    cut = _ARTICLE.sub("", _LEADING.sub("", text.strip(" \t\"'.!?")))
    cut = _TRAILING.sub("", cut).strip(" \t\"'.,;:!?")
    return cut[:limit].rstrip() or None


def _capitalised(text: str, particles: frozenset[str]) -> str | None:
    """Capitalised words at the start of ``text``, with ``particles`` between two of them."""
    words: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        if text[position:match.start()].strip(" ") or len(words) >= MAX_WORDS:
            break  # a comma, a digit, anything but blanks: the name ended
        word = match.group().rstrip(".")
        if word[:1].isupper() or (word.lower() in particles and words):
            words.append(word)
        else:
            break
        position = match.end()
    while words and words[-1].lower() in particles:
        words.pop()
    return " ".join(words) or None


def _lower_words(text: str, most: int) -> str | None:
    """Up to ``most`` words at the start of ``text`` before a stop word or a mark, capitalised."""
    words: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        word = match.group().rstrip(".")
        if text[position:match.start()].strip(" ") or word.lower() in _STOP or len(words) >= most:
            break
        words.append(word)
        position = match.end()
    return " ".join(w if w.lower() in _PLACE_PARTICLES and i else w[:1].upper() + w[1:]
                    for i, w in enumerate(words)) or None
