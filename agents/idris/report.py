"""The analysis as markdown (seed 004's ``analysis_<Project>.md``): what a person reviews
before trusting the generated module, and what a later LLM coder is given."""

from __future__ import annotations

from agents.idris.model import DocumentAnalysis, Invariant

TYPE_NAMES = {"contract": "계약서 (contract)", "invoice": "청구서/계산서 (invoice)",
              "approval": "품의서/결재 문서 (approval)", "other": "기타 (other)"}


def analysis_markdown(analysis: DocumentAnalysis, project: str) -> str:
    """Render ``analysis`` for the project ``project``."""
    sections = [
        _head(analysis, project), _fields(analysis), _parties(analysis), _amounts(analysis),
        _dates(analysis), _items(analysis), _invariants(analysis.invariants), _warnings(analysis),
        _clauses(analysis),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def money(analysis: DocumentAnalysis, value: int) -> str:
    """``52,800,000 KRW`` (or ``1,234.50 USD`` when amounts are kept in cents)."""
    text = f"{value:,}" if analysis.scale == 1 else f"{value / analysis.scale:,.2f}"
    return f"{text} {analysis.currency}".strip()


def _head(analysis: DocumentAnalysis, project: str) -> str:
    detected = ("" if analysis.detected_type == analysis.document_type
                else f" (the text reads like {analysis.detected_type})")
    unit = "whole units" if analysis.scale == 1 else f"1/{analysis.scale} of a unit"
    return "\n".join([
        f"# 분석 결과: {analysis.title or analysis.source}",
        "",
        f"- source: `{analysis.source}` ({analysis.kind}, {analysis.pages} page(s))",
        f"- module: `Domains.{project}`",
        "",
        f"## 문서 유형: {analysis.title or '?'} — {TYPE_NAMES.get(analysis.document_type, analysis.document_type)}"
        f"{detected}",
        f"- currency: {analysis.currency or '(none found)'}, amounts kept in {unit}",
    ])


def _fields(analysis: DocumentAnalysis) -> str:
    rows = [f"| `{f.ident}` | {f.label} | String | {f.value} |" for f in analysis.text_fields]
    rows += [f"| `{a.ident}` | {a.label} | Money | {money(analysis, a.value)} |" for a in analysis.amounts]
    rows += [f"| `{d.ident}` | {d.label} | Date | {d.value.isoformat()} |" for d in analysis.dates]
    rows += [f"| `{p.ident}` | {p.label} | Period | {p.start.isoformat()} ~ {p.end.isoformat()} |"
             for p in analysis.periods]
    if analysis.items:
        rows.append(f"| `items` | line items | List LineItem | {len(analysis.items)} row(s) |")
    rows += [f"| `{p.ident}` | {p.role_label} | Party {p.role} | {p.name} |" for p in analysis.parties]
    if not rows:
        return "## 주요 필드\n\n(none found)"
    return "\n".join(["## 주요 필드", "", "| field | label | type | value |", "| --- | --- | --- | --- |", *rows])


def _parties(analysis: DocumentAnalysis) -> str:
    if not analysis.parties:
        return ""
    lines = ["## 당사자 (parties)", ""]
    for party in analysis.parties:
        details = "; ".join(f"{d.label} {d.value}" for d in party.details)
        lines.append(f"- {party.role_label} → `{party.ident} : Party {party.role}`: {party.name}"
                     + (f" ({details})" if details else ""))
    return "\n".join(lines)


def _amounts(analysis: DocumentAnalysis) -> str:
    if not analysis.amounts:
        return ""
    lines = ["## 금액 (amounts)", ""]
    for amount in analysis.amounts:
        extra = f", stated rate {float(amount.stated_rate * 100):g}%" if amount.stated_rate is not None else ""
        words = ""
        if amount.words_value is not None:
            verdict = "matches" if amount.words_value == amount.value else "DOES NOT match"
            words = f"; in words {amount.in_words} {verdict} the digits"
        value = money(analysis, amount.value)
        lines.append(f"- {amount.label} (`{amount.ident}`, {amount.role}): {value}{extra}{words}")
    return "\n".join(lines)


def _dates(analysis: DocumentAnalysis) -> str:
    if not (analysis.dates or analysis.periods):
        return ""
    lines = ["## 기간 및 날짜 (dates)", ""]
    lines += [f"- {p.label} (`{p.ident}`): {p.start.isoformat()} ~ {p.end.isoformat()}" for p in analysis.periods]
    lines += [f"- {d.label} (`{d.ident}`, {d.role}): {d.value.isoformat()}" for d in analysis.dates]
    return "\n".join(lines)


def _items(analysis: DocumentAnalysis) -> str:
    if not analysis.items:
        return ""
    lines = ["## 세부 내역 (line items)", "", "| item | quantity | unit price | amount |", "| --- | --- | --- | --- |"]
    lines += [f"| {i.description} | {i.quantity} | {money(analysis, i.unit_price)} | {money(analysis, i.amount)} |"
              for i in analysis.items]
    return "\n".join(lines)


def _invariants(invariants: tuple[Invariant, ...]) -> str:
    if not invariants:
        return "## 불변식\n\n(none found)"
    lines = ["## 불변식", ""]
    for invariant in invariants:
        mark = "" if invariant.holds else " — **the document breaks it**"
        lines.append(f"- {invariant.statement}  (`{invariant.formula}`; {invariant.kind}, {invariant.origin}){mark}")
    return "\n".join(lines)


def _warnings(analysis: DocumentAnalysis) -> str:
    if not analysis.warnings:
        return ""
    return "\n".join(["## 주의 (warnings)", "", *[f"- {w}" for w in analysis.warnings]])


def _clauses(analysis: DocumentAnalysis) -> str:
    if not analysis.clauses:
        return ""
    return "\n".join(["## 조항 (clauses, not modelled)", "", *[f"- {c}" for c in analysis.clauses]])
