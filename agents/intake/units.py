"""Quantities with units in a reply, converted to a field's unit (``x-unit``) with ``pint``.

One linear pattern finds a number followed by a unit word ("68 kilos", "1.70 m", "12st", "two
years" once number words are digits), and the compound forms people use for body measures
("11 stone 4", "5'7\"", "5 ft 11 in", "6 foot 2", "1m82"); ``pint`` (BSD, the reference
Python library for units: its registry knows stone, pound, foot, inch, month, ...) does every
conversion, so no factor is written here. A quantity whose unit is not of the field's dimension
(a length for a weight) is not the field's. What the pattern does not see is no quantity: the
resolver then treats the number as bare, and a bare number for a field with a unit is asked
unless the reply names a unit of that dimension elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pint

#: The unit words people type, as pint's unit names.
_WORDS = {
    "kg": "kilogram", "kgs": "kilogram", "kilo": "kilogram", "kilos": "kilogram", "kilogram": "kilogram",
    "kilograms": "kilogram", "kilogrammes": "kilogram", "g": "gram", "grams": "gram",
    "lb": "pound", "lbs": "pound", "pound": "pound", "pounds": "pound",
    "st": "stone", "stone": "stone", "stones": "stone",
    "cm": "centimeter", "cms": "centimeter", "centimetres": "centimeter", "centimeters": "centimeter",
    "m": "meter", "metre": "meter", "metres": "meter", "meter": "meter", "meters": "meter", "mm": "millimeter",
    "ft": "foot", "foot": "foot", "feet": "foot", "'": "foot", "’": "foot",
    "in": "inch", "inch": "inch", "inches": "inch", '"': "inch", "”": "inch", "''": "inch",
    "year": "year", "years": "year", "yr": "year", "yrs": "year",
    "month": "month", "months": "month", "mo": "month", "mos": "month",
    "week": "week", "weeks": "week", "wk": "week", "wks": "week", "day": "day", "days": "day",
}
#: A compound's second part, when it is given without its unit ("11 stone 4": pounds).
_IMPLIED = {"stone": "pound", "foot": "inch", "meter": "centimeter"}
_UNIT = (r"(?:kilogrammes|kilograms|kilogram|kilos|kilo|kgs|kg|grams|g|pounds|pound|lbs|lb|stones|stone|st|"
         r"centimetres|centimeters|cms|cm|metres|meters|metre|meter|mm|m|feet|foot|ft|inches|inch|in|''|'|’|\"|”|"
         r"years|year|yrs|yr|months|month|mos|mo|weeks|week|wks|wk|days|day)")
_NUM = r"\d{1,4}(?:[.,]\d{1,2})?"
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?P<a>{_NUM}|an?|one|half(?:\s{{1,2}}an?)?)(?:\s{{1,2}}(?:full|whole))?[\s-]{{0,2}}(?P<ua>{_UNIT})"
    rf"(?:(?<=['’\"”])|(?<=\dm)|(?![\w]))(?P<half>\s{{1,2}}and\s{{1,2}}a\s{{1,2}}half\b)?"
    rf"(?:\s{{0,2}}(?:and\s{{1,2}})?(?P<b>\d{{1,2}}(?:\.\d{{1,2}})?)\s{{0,2}}(?P<ub>{_UNIT})?(?!\w|[.,]\d))?",
    re.IGNORECASE)
#: A day's ordinal whose suffix spells a unit: "1st", "21st", "31st" (not "11st", eleven stone).
_ORDINAL_ST = re.compile(r"(?:\d?[02-9])?1st", re.IGNORECASE)
#: A length said as two bare numbers, feet then inches ("I'm five eleven"): only for a length field.
_FEET_INCHES = re.compile(r"(?<![\w.,])(?P<a>[4-7])\s{1,2}(?P<b>1[01]|\d)(?![\w.,])")


@dataclass(frozen=True)
class Quantity:
    """A quantity read from a text, converted: its value in the field's unit and where it stands."""

    value: float
    start: int
    end: int
    words: str
    unit: str = ""
    """The unit it was said in (pint's name): a correction's bare number is in the same ("68 kilos, sorry, 72")."""


@lru_cache(maxsize=1)
def registry() -> pint.UnitRegistry[Any]:
    """pint's default registry, built once per process (it takes a few hundred milliseconds)."""
    return pint.UnitRegistry()


def dimension(unit: str) -> str | None:
    """A unit's dimension as pint names it (``[mass]``, ``[length]``, ``[time]``), None if unknown."""
    try:
        return str(registry().Unit(_WORDS.get(unit.lower(), unit)).dimensionality)
    except (pint.errors.PintError, ValueError, AttributeError, TypeError):
        return None


def quantities(text: str, unit: str) -> list[Quantity]:
    """Quantities in ``text`` of ``unit``'s dimension, each converted to ``unit``, left to right."""
    wanted = dimension(unit)
    if wanted is None:
        return []
    found = []
    at = 0
    while (match := _QUANTITY.search(text, at)) is not None:
        at = match.end("ua")  # "70 kg and 1.75 m": a second part no compound takes is read on its own
        if _ORDINAL_ST.fullmatch(match.group("a") + match.group("ua")):
            continue  # "the 21st of march": an ordinal, not 21 stone ("12st" is stone)
        first = _WORDS.get(match["ua"].lower())
        if first is None or dimension(first) != wanted:
            continue
        value = _to(_count(match["a"]) + (0.5 if match["half"] else 0.0), first, unit)  # "a year and a half"
        end = match.end("half") if match["half"] else match.end("ua")
        if match["b"] is not None:
            second = _WORDS.get((match["ub"] or "").lower()) or _IMPLIED.get(first)
            if second is not None and second != first and dimension(second) == wanted and first in _IMPLIED:
                value += _to(float(match["b"]), second, unit)
                end = at = match.end()
        found.append(Quantity(round(value, 2), match.start(), end, text[match.start():end], first))
    if not found and wanted == dimension("foot"):
        found += [Quantity(round(_to(float(m["a"]), "foot", unit) + _to(float(m["b"]), "inch", unit), 2),
                           m.start(), m.end(), m.group()) for m in _FEET_INCHES.finditer(text)]
    return found


def names_dimension(text: str, unit: str) -> bool:
    """Whether ``text`` names any unit of ``unit``'s dimension ("kg" anywhere in a reply about weight)."""
    wanted = dimension(unit)
    return wanted is not None and any(dimension(_WORDS[m.group().lower()]) == wanted
                                      for m in re.finditer(rf"(?<=[\d\s]){_UNIT}(?![\w])", text, re.IGNORECASE)
                                      if m.group().lower() in _WORDS)


def convert(value: float, said: str, unit: str) -> float:
    """``value`` said in ``said`` (a pint unit name or a unit word) in ``unit``."""
    return round(_to(value, _WORDS.get(said.lower(), said), unit), 2)


def _count(text: str) -> float:
    """A quantity's number: digits, or "a"/"an"/"one" (1) and "half a" (0.5)."""
    word = text.lower()
    if word.startswith("half"):
        return 0.5
    return 1.0 if word in ("a", "an", "one") else float(word.replace(",", "."))


def _to(value: float, unit: str, target: str) -> float:
    return float(registry().Quantity(value, unit).to(_WORDS.get(target.lower(), target)).magnitude)
