"""Idris identifiers: unique within the generated module, never a keyword or a name the
module (or the Prelude it uses) already means something else by.

Record fields in one Idris module share a namespace with every other top-level name, so
one :class:`Names` registry hands out every field and value name of a module.
"""

from __future__ import annotations

import re

#: Idris2 keywords (lower-case identifiers that cannot name a field or a value).
KEYWORDS = frozenset("""
    auto case data default do else export forall if impossible implementation import in
    infix infixl infixr interface let module mutual namespace of parameters partial prefix
    private public record rewrite then total covering using where with failing proof
""".split())

#: Names the generated module defines or uses from the Prelude / Data.So.
BUILTIN = frozenset("""
    amount year month day isLeapYear daysInMonth isValidDate dateKey startDate endDate
    description quantity unitPrice lineAmount itemsTotal items amounts role show map id not
    length min max compare fst snd pure abs negate div mod cast the elem sum product filter
    lookup take drop head tail reverse concat lines words trim choose so oh refl just nothing
    left right yes no decideSo decideEq lineItemOf prf
""".split())

_IDENT = re.compile(r"^[a-z][A-Za-z0-9_]*$")


class Names:
    """Hands out unique lower-camel identifiers (``vat``, ``vat2``, ...)."""

    def __init__(self, reserved: frozenset[str] = KEYWORDS | BUILTIN) -> None:
        self._taken: set[str] = {name.lower() for name in reserved}
        self._claimed: set[str] = set()

    def claim(self, base: str) -> str:
        """A unique identifier for ``base``; the same base claimed twice gets ``base2``.

        Claiming a base that was already handed out under that exact name returns it again
        only through :meth:`get`; here each call reserves a new name.
        """
        base = to_ident(base)
        candidate, counter = base, 1
        while candidate.lower() in self._taken:
            counter += 1
            candidate = f"{base}{counter}"
        self._taken.add(candidate.lower())
        self._claimed.add(candidate)
        return candidate

    def claimed(self, name: str) -> bool:
        """Whether ``name`` was handed out by this registry."""
        return name in self._claimed


def to_ident(text: str) -> str:
    """A valid lower-camel identifier made of ``text``'s ASCII words (``field`` if none)."""
    if _IDENT.match(text):
        return text
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*|\d+", text)
    if not words:
        return "field"
    head, *rest = words
    ident = head[0].lower() + head[1:] + "".join(w[:1].upper() + w[1:] for w in rest)
    return ident if ident[0].isalpha() else f"field{ident}"
