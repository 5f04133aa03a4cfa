"""QA grounded in the findings (issue 41): what a report claims, checked against what research found.

The built-in rules (:mod:`agents.blueprint.checks`) look at the report alone; these read it with
the findings, so a report cannot pass with a false sentence, whoever wrote it (the offline writer
or an LLM). Each failure carries the fix the writer's retry follows:

- **absence**: a sentence saying the findings hold nothing on X ("say nothing about X", "no data
  on X", "X is not mentioned") fails when a finding names X (its words, ``_`` and ``-`` read as
  spaces, in a key or a value). Fix: ``cite 'X'``.
- **numbers**: each number in the report (outside headings and the blueprint's own words echoed)
  is in a finding (a value, a key, a string such as a CSV cell or an error), is a threshold of the
  blueprint's ``decision``, counts what the sentence names ("5 row(s)", "3 of 7 rows"), or is
  derived from two such numbers shown in the same sentence (their difference, sum, ratio or
  percentage change: the derivation is shown by its operands). Fix: ``ground``.
- **keywords**: the blueprint's goal, guidance, instructions and decision texts echoed in the report are removed
  before the required keywords are looked for (:func:`unechoed`): an echo is not a mention.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from agents.blueprint import directives
from agents.blueprint.decision import observed_numbers
from agents.blueprint.directives import Issue
from agents.blueprint.model import Blueprint
from agents.blueprint.research import Finding
from agents.untrusted_text import one_line

_ABSENCE = (
    re.compile(r"\bsays? nothing (?:about|on|of) (?P<x>[^.;:\n]+)", re.IGNORECASE),
    re.compile(r"\b(?:no|not any|without) (?:data|information|finding|findings|mention|figures?|facts?|details?) "
               r"(?:on|about|for|of|regarding) (?P<x>[^.;:\n]+)", re.IGNORECASE),
    re.compile(r"\bdo(?:es)? not (?:mention|cover|report|say anything about|address) (?P<x>[^.;:\n]+)", re.IGNORECASE),
    re.compile(r"(?P<x>[\w'’ -]{2,40}?) (?:is|are|was|were) (?:not|never) (?:mentioned|covered|reported|found|"
               r"available|given)", re.IGNORECASE),
)
_SPLIT = re.compile(r",\s*|\s+(?:and|or|nor)\s+")
_LEADING = re.compile(r"^(?:the|a|an|any|its|their)\s+", re.IGNORECASE)
_NORMAL = re.compile(r"[\s_\-/]+")
_DATE = re.compile(r"(?<![\w.])\d{4}-\d{2}(?:-\d{2})?(?![\w])")
_NUMBER = re.compile(r"(?<![\w.,])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|,\d{3})(?P<pct>\s?%)?")
_COUNTED = re.compile(r"(?<![\w.,])\d+(?: of \d+)?(?: [a-z]+){0,2}? "
                      r"(?:rows?|facts?|columns?|sections?|findings?|tools?|"
                      r"items?|entries|records|instructions?|lessons?|words|attempts?|validators?)(?:\(s\))?\b",
                      re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:[-*] \*\*\d+\*\*:|\d+[.)]\s)")  # a list's own numbering
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")
MAX_ISSUES = 5
#: Figures of one sentence a derived one may come from (pairs of them are tried: bounded work).
MAX_OPERANDS = 16


def normal(text: str) -> str:
    """Lower case, with ``_``, ``-``, ``/`` and runs of spaces read as one space."""
    return _NORMAL.sub(" ", text.lower()).strip()


def finding_text(findings: list[Finding]) -> str:
    """Every key, value and error of the findings, as one normalised text."""
    return normal(" ".join(json.dumps(f.get("value"), ensure_ascii=False) + " " + f.get("error", "")
                           for f in findings))


def names(text: str, term: str) -> bool:
    """Whether normalised ``text`` names ``term`` as whole words."""
    wanted = normal(term)
    return bool(wanted) and re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", text) is not None


def naming_facts(findings: list[Finding], term: str, limit: int = 3) -> list[tuple[str, str, Any]]:
    """(tool, key, value) of the facts whose key or value names ``term``: a dict's items, a row's cells."""
    found: list[tuple[str, str, Any]] = []
    for finding in findings:
        if not finding["ok"]:
            continue
        value = finding["value"]
        rows = [value] if isinstance(value, dict) else [r for r in value if isinstance(r, dict)] \
            if isinstance(value, list) else []
        for row in rows:
            for key, cell in row.items():
                if names(normal(f"{key} {cell}"), term) and len(found) < limit:
                    found.append((finding["tool"], str(key), cell))
    return found


def unechoed(report: str, blueprint: Blueprint) -> str:
    """The report without the blueprint's own words (goal, guidance, instructions, the decision's question
    and reasons) it repeats."""
    decision = blueprint.decision
    said = [decision.question, *(r.because for r in decision.rules)] if decision else []
    for echo in [blueprint.goal, *blueprint.instructions, *(s.guidance for s in blueprint.sections), *said]:
        if echo.strip():
            report = report.replace(echo.strip(), " ")
    return report


def absence_issues(report: str, findings: list[Finding]) -> list[Issue]:
    """A claim that the findings say nothing about X, while a finding names X."""
    known, issues, seen = finding_text(findings), [], set()
    for pattern in _ABSENCE:
        for match in pattern.finditer(report):
            for term in _terms(match["x"]):
                if term.lower() in seen or not names(known, term):
                    continue
                seen.add(term.lower())
                facts = naming_facts(findings, term, 1)
                where = f" (the finding {facts[0][0]} holds {facts[0][1]}: {one_line(str(facts[0][2]), 60)})" \
                    if facts else ""
                issues.append(Issue(
                    code="false_absence", message=f"the report says the findings hold nothing on {term!r}, "
                    f"but a finding names it{where}", fix=directives.make("cite", term)))
    return issues[:MAX_ISSUES]


def _terms(text: str) -> list[str]:
    terms = [_LEADING.sub("", t.strip(" '\"“”‘’*_`()")) for t in _SPLIT.split(text)]
    return [t for t in terms if 2 <= len(t) <= 60]


def number_issues(report: str, blueprint: Blueprint, findings: list[Finding]) -> list[Issue]:
    """Numbers neither in a finding nor in the decision's rules nor derived beside their operands."""
    known_text = finding_text(findings)
    known = sorted(abs(v) for v in (*_values(known_text), *blueprint.decision_numbers(),
                                    *observed_numbers(blueprint, findings)))
    issues: list[Issue] = []
    for sentence in _sentences(unechoed(report, blueprint)):
        bare = _COUNTED.sub(" ", _DATE.sub(" ", sentence))
        issues += [_unsupported(d, sentence) for d in _DATE.findall(sentence) if normal(d) not in known_text]
        tokens = list(_NUMBER.finditer(bare))
        operands = [v for v, _ in (_token(t) for t in tokens) if _supported(v, 0.0, known)][:MAX_OPERANDS]
        for token in tokens:
            value, tolerance = _token(token)
            if _supported(value, tolerance, known) \
                    or (token["pct"] and _supported(value / 100, tolerance / 100, known)) \
                    or _derived(value, tolerance, operands):
                continue
            issues.append(_unsupported(token.group().strip(), sentence))
            if len(issues) >= MAX_ISSUES:
                return issues
    return issues[:MAX_ISSUES]


def _unsupported(number: str, sentence: str) -> Issue:
    return Issue(code="unsupported_number",
                            message=f"the number {number} ({one_line(sentence.strip(), 100)!r}) is in no finding and "
                            "not derived from figures shown beside it", fix=directives.make("ground", number))


def _sentences(report: str) -> Iterable[str]:
    for line in report.splitlines():
        if line.lstrip().startswith("#") or re.fullmatch(r"\s*\|?[\s|:-]*", line):
            continue
        yield from (s for s in _SENTENCE.split(_LABEL.sub(" ", line)) if s.strip())


def _values(text: str) -> list[float]:
    return [_token(m)[0] for m in _NUMBER.finditer(_DATE.sub(" ", text))]


def _token(match: re.Match[str]) -> tuple[float, float]:
    """The number and half a unit of its last shown digit (how far a rounded figure may be off)."""
    digits = re.sub(r"[^\d.+-]", "", match.group().replace("%", ""))
    decimals = len(digits.partition(".")[2])
    return float(digits), 0.5 * 10 ** -decimals + 1e-9


def _supported(value: float, tolerance: float, known: list[float]) -> bool:
    """Whether a figure of ``known`` (sorted, absolute) is within ``tolerance`` of ``value``."""
    at = bisect.bisect_left(known, abs(value) - tolerance)
    return at < len(known) and known[at] <= abs(value) + tolerance


def _derived(value: float, tolerance: float, operands: list[float]) -> bool:
    """Whether ``value`` is the difference, sum, ratio or percentage change of two operands beside it."""
    for i, a in enumerate(operands):
        for b in operands[i + 1:]:
            candidates = [b - a, a + b]
            candidates += [(b - a) / abs(a) * 100, b / a, b / a * 100] if a else []
            candidates += [a / b, a / b * 100, (a - b) / abs(b) * 100] if b else []
            if any(math.isfinite(c) and abs(abs(c) - abs(value)) <= max(tolerance, 1e-9) for c in candidates):
                return True
    return False


def grounded_issues(report: str, blueprint: Blueprint, findings: list[Finding]) -> list[Issue]:
    """The report's claims against the findings: absence claims, then numbers."""
    return absence_issues(report, findings) + number_issues(report, blueprint, findings)
