"""Every value is checked against its node's JSON Schema before it is stored; enum near-misses mapped.

The check is the ``jsonschema`` library's (Draft 2020-12, with its format checker): type,
``minimum``/``maximum`` (and the exclusive forms), ``enum``, ``pattern``, ``minLength``/
``maxLength`` and ``format`` (``date`` is the library's full date; ``partial-date`` and
``year`` are registered here). A value that fails is not stored: :func:`check` says why in
words a person reads ("150 is more than 120, the most for age"), and the info role asks again
with that reason.

An enum value is found in a reply by its words (``self employed``, ``Self-Employed``), by a
schema's ``x-synonyms`` ("freelance" for ``self-employed``), and, only when the field was
the question asked, by a near spelling: a run of the reply's words whose similarity to a
value (``difflib``'s ratio over the normalised words) is at least :data:`NEAR_CUTOFF`, the
closest winning. Nothing else is guessed.
"""

from __future__ import annotations

import datetime
import difflib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from agents.intake.schema import FieldSchema, Scalar

#: Least difflib ratio for a near spelling of an enum value ("retird" → retired: 0.92;
#: "employed" → unemployed: 0.89 is never tried, since "employed" itself is a value).
NEAR_CUTOFF = 0.85
_PARTIAL_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$")
_SEPARATORS = re.compile(r"[\s_\-]+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
FORMATS = FormatChecker()


@FORMATS.checks("partial-date")
def _partial_date(value: object) -> bool:
    """YYYY, YYYY-MM or YYYY-MM-DD, each a real calendar year, month or day."""
    if not isinstance(value, str):
        return True
    if not _PARTIAL_DATE.match(value):
        return False
    parts = [int(p) for p in value.split("-")] + [1, 1]
    try:
        datetime.date(parts[0], parts[1], parts[2])
    except ValueError:
        return False
    return True


@FORMATS.checks("year")
def _year(value: object) -> bool:
    """A four-digit year."""
    return not isinstance(value, int) or isinstance(value, bool) or 1000 <= value <= 9999


@FORMATS.checks("money")
def _money(value: object) -> bool:
    """An amount (any number: its bounds are minimum and maximum)."""
    return True


@dataclass(frozen=True)
class Checked:
    """A value as it will be stored, or why it cannot be (``reason`` is '' when it is fine)."""

    value: Scalar | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The value may be stored."""
        return not self.reason


@lru_cache(maxsize=256)
def _validator(schema: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema), format_checker=FORMATS)


def check(name: str, spec: FieldSchema, value: Scalar) -> Checked:
    """``value`` checked against ``spec`` (see the module doc); an integral float becomes an int."""
    if spec.type == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    errors = sorted(_validator(json.dumps(spec.json_schema(), sort_keys=True)).iter_errors(value),
                    key=lambda e: str(e.validator))
    return Checked(value, _reason(name, value, errors[0])) if errors else Checked(value)


def _reason(name: str, value: Any, error: ValidationError) -> str:
    """Why ``value`` does not fit, in a person's words."""
    field, shown, limit, rule = name.replace("_", " "), _shown(value), error.validator_value, str(error.validator)
    if rule in _BOUNDS:
        return _BOUNDS[rule].format(value=shown, limit=_shown(limit), field=field)
    if rule == "enum":
        return f"{shown} is not one of {', '.join(map(str, limit if isinstance(limit, list) else []))}"
    if rule == "type":
        return f"{shown} is not {'a whole number' if limit == 'integer' else 'a ' + str(limit)}"
    if rule == "format":
        return f"{shown} is not a {'full date (YYYY-MM-DD)' if limit == 'date' else str(limit).replace('-', ' ')}"
    if rule == "maxLength":
        return f"{shown} is too long for a {field} (at most {limit} characters)"
    return {"pattern": f"{shown} does not look like a {field}",
            "minLength": f"{shown} is too short for a {field}"}.get(rule, f"{shown} does not fit {field}")


_BOUNDS = {
    "minimum": "{value} is less than {limit}, the least for {field}",
    "exclusiveMinimum": "{value} is not more than {limit}, as {field} must be",
    "maximum": "{value} is more than {limit}, the most for {field}",
    "exclusiveMaximum": "{value} is not less than {limit}, as {field} must be",
}


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return repr(value)[:60] if isinstance(value, str) else str(value)


def normal(text: str) -> str:
    """Words as compared with enum values: lower case, hyphens, underscores and blanks as one space."""
    return _SEPARATORS.sub(" ", text.lower().replace("’", "'")).strip()


@dataclass(frozen=True)
class ChoiceMatch:
    """An enum value found in a text: where its words are, and how (exact, synonym, near)."""

    value: str
    start: int
    end: int
    how: str


def find_choices(spec: FieldSchema, text: str, *, near: bool) -> list[ChoiceMatch]:
    """The enum values ``text`` names, left to right, never two over the same words.

    Exact values and synonyms first (the longest phrase wins where two overlap); then, with
    ``near``, near spellings of a value among the words no exact match took.
    """
    phrases = [(_pattern(value), value, "exact") for value in spec.enum or []]
    phrases += [(_pattern(word), value, "synonym") for value, words in spec.synonyms.items() for word in words]
    found: list[ChoiceMatch] = []
    for pattern, value, how in sorted(phrases, key=lambda p: -len(p[0])):
        for match in _compiled(pattern).finditer(text.lower()):
            if not any(m.start < match.end() and match.start() < m.end for m in found):
                found.append(ChoiceMatch(value, match.start(), match.end(), how))
    if near and not found:
        found += _near(spec, text)
    return sorted(found, key=lambda m: m.start)


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


#: A sign and the words for it ("+ve", "-ve": the shorthand of medical notes).
_SIGNS = {"+": r"(?:\+\s?ve|\+|positive|pos|plus)", "-": r"(?:-\s?ve|-|negative|neg|minus)"}


@lru_cache(maxsize=4096)
def _pattern(phrase: str) -> str:
    """How an enum value or synonym is found: its words on word boundaries, any separator between;
    a value ending in a sign ("O+", "AB-") only with that sign or its word ("a positive", "AB neg",
    "type A, rhesus negative"), never its letters alone (the article "a" is no blood type "A-")."""
    phrase = phrase.lower().strip()
    if phrase[-1:] in _SIGNS and phrase[:-1].strip().isalnum():
        stem = phrase[:-1].strip()
        stem_pattern = "(?:o|0)" if stem == "o" else re.escape(stem)
        return (rf"(?<![\w+-]){stem_pattern}[\s,]{{0,3}}(?:(?:rh|rhesus)(?:\s{{0,2}}factor)?\s{{0,2}})?"
                rf"{_SIGNS[phrase[-1]]}(?![\w+-])")
    words = normal(phrase).split(" ")
    return r"(?<!\w)" + r"[\s_\-]+".join(re.escape(w) for w in words) + r"(?!\w)"


def _near(spec: FieldSchema, text: str) -> list[ChoiceMatch]:
    """The closest near spelling of an enum value among runs of one to three words of ``text``."""
    words = list(_WORD.finditer(text[:400]))
    best: tuple[float, ChoiceMatch] | None = None
    for value in spec.enum or []:
        if value[-1:] in _SIGNS:  # "b" is no near spelling of "b-": its sign is the point
            continue
        size = len(normal(value).split(" "))
        for i in range(len(words) - size + 1):
            run = words[i:i + size]
            candidate = normal(" ".join(w.group() for w in run))
            ratio = difflib.SequenceMatcher(None, candidate, normal(value)).ratio()
            if ratio >= NEAR_CUTOFF and (best is None or ratio > best[0]):
                best = (ratio, ChoiceMatch(value, run[0].start(), run[-1].end(), f"near ({ratio:.2f})"))
    return [best[1]] if best else []
