"""The offline writer role: a markdown report filled from the findings and the directives.

Deterministic: the same blueprint, findings and directives give the same report. It writes
``# title``, the goal, a summary, then one ``##`` section per blueprint section with its
guidance and its tools' findings (a dict as bullets, a list of rows as a table, text as a
paragraph). It acts on directives (:mod:`agents.blueprint.directives`): ``detail`` shows
every fact and up to :data:`FULL_ROWS` rows instead of the first few; ``section`` adds a
section; ``keyword`` names the term in the summary; ``fill`` gives an empty section a line.
Findings are tool output: every value is shown as one bounded printable line, and table
cells cannot break the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.blueprint.directives import Directive
from agents.blueprint.model import Blueprint, SectionSpec
from agents.blueprint.research import Finding
from agents.untrusted_text import one_line

BRIEF_FACTS, FULL_FACTS = 3, 40
BRIEF_ROWS, FULL_ROWS = 3, 25
BRIEF_TEXT, FULL_TEXT = 240, 2000
CELL, FULL_CELL = 60, 200


def write_report(blueprint: Blueprint, findings: list[Finding], directives: list[Directive]) -> str:
    """The report for ``blueprint`` from ``findings``, following ``directives``."""
    style = Style(full=any(d["kind"] == "detail" for d in directives),
                  keywords=tuple(d["value"].lower() for d in directives if d["kind"] == "keyword"))
    fill = any(d["kind"] == "fill" for d in directives)
    by_tool = {finding["tool"]: finding for finding in findings}
    parts = [f"# {blueprint.title}", blueprint.goal.strip() or f"A report on {blueprint.subject}."]
    for section in blueprint.sections:
        parts += [f"## {section.title}", *_section_body(section, by_tool, style, fill)]
    present = {section.title.lower() for section in blueprint.sections} | {"summary"}
    unmentioned = [d["value"] for d in directives if d["kind"] == "keyword" and d["value"].lower()
                   not in "\n".join(parts).lower()]
    parts[2:2] = ["## Summary", _summary(blueprint, findings, unmentioned)]
    for directive in directives:
        if directive["kind"] == "section" and directive["value"].lower() not in present:
            present.add(directive["value"].lower())
            parts += [f"## {directive['value']}",
                      f"The research for {blueprint.subject} found nothing specific for this section; it is kept "
                      "so that the report has the structure it was asked for."]
    return "\n\n".join(part for part in parts if part) + "\n"


def _summary(blueprint: Blueprint, findings: list[Finding], unmentioned: list[str]) -> str:
    found = [f["tool"] for f in findings if f["ok"]]
    failed = [f["tool"] for f in findings if not f["ok"]]
    text = (f"This report on {blueprint.subject} has {len(blueprint.sections)} section(s), drawn from "
            f"{len(found)} research finding(s){' (' + ', '.join(found) + ')' if found else ''}.")
    if failed:
        text += f" Missing: the tool(s) {', '.join(failed)} returned nothing usable."
    if unmentioned:  # asked for, and no finding shown says anything about it: say so
        text += f" The research findings say nothing about {', '.join(unmentioned)}."
    return text


def _section_body(section: SectionSpec, by_tool: dict[str, Finding], style: Style, fill: bool) -> list[str]:
    body = [section.guidance.strip()] if section.guidance.strip() else []
    for name in section.tools:
        finding = by_tool.get(name)
        if finding is None:
            continue
        body.append(render_finding(finding, style))
    if not any(body) and fill:
        body.append("No research finding covers this section.")
    return body


@dataclass(frozen=True)
class Style:
    """How much of each finding to show: brief or in full, and the terms that must stay in."""

    full: bool = False
    keywords: tuple[str, ...] = ()

    def shown(self, items: list[Any], brief: int, full: int) -> list[Any]:
        """The items to show: the first ``brief`` (or ``full``), and any that holds a keyword."""
        limit = full if self.full else brief
        return [item for i, item in enumerate(items[:FULL_ROWS * 4])
                if i < limit or any(k in _compact(item).lower() for k in self.keywords)]


def render_finding(finding: Finding, style: Style) -> str:
    """One finding as markdown: what the tool returned, or why it returned nothing."""
    if not finding["ok"]:
        return f"_The tool {finding['tool']} failed: {one_line(finding['error'], 200)}._"
    value = finding["value"]
    if isinstance(value, dict):
        return _bullets(list(value.items()), style)
    if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
        table = _table(value, style)
        return table + ("\n\n" + _trends(value) if style.full else "")
    if isinstance(value, list):
        return _bullets([(str(i + 1), item) for i, item in enumerate(value)], style)
    return one_line(str(value), FULL_TEXT if style.full else BRIEF_TEXT)


def _bullets(facts: list[tuple[Any, Any]], style: Style) -> str:
    shown = style.shown(facts, BRIEF_FACTS, FULL_FACTS)
    lines = [f"- **{_label(key)}**: {_cell(value, 200)}" for key, value in shown]
    if len(facts) > len(shown):
        lines.append(f"- … and {len(facts) - len(shown)} more")
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]], style: Style) -> str:
    shown = style.shown(rows, BRIEF_ROWS, FULL_ROWS)
    cell = FULL_CELL if style.full else CELL
    columns = list(dict.fromkeys(key for row in shown for key in row))[:8]
    lines = ["| " + " | ".join(_label(c) for c in columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, ""), cell) for c in columns) + " |" for row in shown]
    if len(rows) > len(shown):
        lines.append(f"\n({len(rows) - len(shown)} more row(s) not shown)")
    return "\n".join(lines)


def _trends(rows: list[dict[str, Any]]) -> str:
    """For each numeric column: its first and last value and the change, in one sentence each."""
    sentences = []
    for column in list(rows[0])[:8]:
        first, last = _number(rows[0].get(column)), _number(rows[-1].get(column))
        if first is None or last is None or len(rows) < 2:
            continue
        change = f" ({(last - first) / abs(first):+.1%})" if first else ""
        sentences.append(f"{_label(column).capitalize()} went from {first:g} in the first row to {last:g} in the "
                         f"last{change}.")
    # The first numeric column is usually the rows' key (a year), whose "growth" says nothing.
    return " ".join(sentences[1:] if len(sentences) > 1 else sentences)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _label(key: Any) -> str:
    return _cell(key, 40).replace("_", " ")


def _cell(value: Any, limit: int) -> str:
    """A value as one printable line that cannot end a table cell or start a heading."""
    text = value if isinstance(value, str) else _compact(value)
    return one_line(text, limit).replace("|", "/").lstrip("# ")


def _compact(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1000 else f"{value:g}"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_compact(v)}" for k, v in list(value.items())[:10])
    if isinstance(value, list):
        return ", ".join(_compact(v) for v in value[:10])
    return str(value)
