"""The offline analysis (seed 004, node 1): document text → :class:`DocumentAnalysis`.

It extracts the fields (:mod:`agents.idris.extract`), names them once for the whole module
(:mod:`agents.idris.names`), settles the money scale, and finds the invariants by checking
the numbers (:mod:`agents.idris.invariants`). :mod:`agents.idris.report` renders it as the
markdown the seed shows.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from decimal import Decimal

from agents.idris.document import DocumentText
from agents.idris.extract import Extraction, RawAmount, RawParty, claim_idents, extract
from agents.idris.invariants import amount_invariants, date_invariants, item_invariants
from agents.idris.model import (
    Amount,
    DateField,
    DocumentAnalysis,
    LineItem,
    Party,
    PartyDetail,
    Period,
    TextField,
)
from agents.idris.names import Names

#: Words that tell a document's type, tried on its title first, then on its text.
TYPE_WORDS = (
    ("invoice", ("세금계산서", "계산서", "청구서", "거래명세서", "invoice", "bill")),
    ("approval", ("품의서", "결재", "기안", "approval", "requisition")),
    ("contract", ("계약서", "약정서", "contract", "agreement")),
)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def analyze_document(document: DocumentText, document_type: str) -> DocumentAnalysis:
    """Analyse ``document``, declared by its target to be a ``document_type``."""
    found = extract(document.lines)
    names = Names()
    claim_idents(found, names)
    scale = _scale(found)
    amounts = tuple(_amount(raw, names, scale, index) for index, raw in enumerate(found.amounts, start=1))
    dates = tuple(DateField(names.claim(t.ident if t else f"date{i}"), label, value, t.role if t else "other", line)
                  for i, (t, label, value, line) in enumerate(found.dates, start=1))
    periods = tuple(Period(names.claim(t.ident if t else f"period{i}"), label, start, end, line)
                    for i, (t, label, start, end, line) in enumerate(found.periods, start=1))
    items = tuple(LineItem(i.description, i.quantity, _minor(i.unit_price, scale), _minor(i.amount, scale), i.line)
                  for i in found.items)
    invariants = amount_invariants(amounts) + item_invariants(items, amounts) + date_invariants(dates, periods)
    analysis = DocumentAnalysis(
        source=document.path.name, kind=document.kind, pages=document.pages, title=found.title,
        document_type=document_type, detected_type=detect_type(found.title, document.text),
        currency=_currency(found, document.text), scale=scale,
        text_fields=tuple(TextField(names.claim(t.ident if t else f"text{i}"), label, value, line)
                          for i, (t, label, value, line) in enumerate(found.texts, start=1)),
        parties=tuple(_party(raw, names) for raw in found.parties),
        amounts=amounts, dates=dates, periods=periods, items=items, clauses=tuple(found.clauses),
        invariants=tuple(invariants),
    )
    return _with_warnings(analysis, found)


def _scale(found: Extraction) -> int:
    values = [a.value for a in found.amounts] + [v for i in found.items for v in (i.unit_price, i.amount)]
    return 100 if any(v != v.to_integral_value() for v in values) else 1


def _minor(value: Decimal, scale: int) -> int:
    return int(value * scale)


def _amount(raw: RawAmount, names: Names, scale: int, index: int) -> Amount:
    words, words_value = raw.words if raw.words else ("", None)
    return Amount(
        ident=names.claim(raw.term.ident if raw.term else f"amount{index}"), label=raw.label,
        value=_minor(raw.value, scale), role=raw.term.role if raw.term else "other", line=raw.line,
        stated_rate=raw.rate, in_words=words, words_value=None if words_value is None else words_value * scale,
    )


def _party(raw: RawParty, names: Names) -> Party:
    details = tuple(PartyDetail(term.ident, label, value) for term, label, value in raw.details if term)
    name = raw.name or next((d.value for d in details if d.ident == "partyName"), "")
    details = tuple(d for d in details if d.ident != "partyName")
    return Party(names.claim(raw.term.ident), raw.role_label, raw.term.role, name, details, raw.line)


def detect_type(title: str, text: str) -> str:
    """``contract``, ``invoice``, ``approval`` or ``other``, from the title, else the text."""
    for haystack in (title.lower(), text.lower()):
        for kind, words in TYPE_WORDS:
            if any(word in haystack for word in words):
                return kind
    return "other"


def _currency(found: Extraction, text: str) -> str:
    if found.currencies:
        return Counter(found.currencies).most_common(1)[0][0]
    return "KRW" if _HANGUL.search(text) else ""


def _with_warnings(analysis: DocumentAnalysis, found: Extraction) -> DocumentAnalysis:
    warnings = list(found.warnings)
    for invariant in analysis.violated():
        warnings.append(f"the document breaks its own rule: {invariant.statement}")
    for amount in analysis.amounts:
        if amount.words_value is not None and amount.words_value != amount.value:
            warnings.append(f"{amount.label}: the amount in words ({amount.in_words}) is "
                            f"{amount.words_value:,} but the digits say {amount.value:,}")
    if analysis.document_type not in ("other", analysis.detected_type) and analysis.detected_type != "other":
        warnings.append(f"target.toml says {analysis.document_type}, the text reads like {analysis.detected_type}")
    if not (analysis.amounts or analysis.dates or analysis.periods or analysis.text_fields):
        warnings.append("no labelled fields found: the model will only carry the title")
    return replace(analysis, warnings=tuple(warnings))
