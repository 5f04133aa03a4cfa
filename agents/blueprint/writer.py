"""The offline writer role: a markdown report filled from the findings, following the directives.

Deterministic: the same blueprint, findings and directives give the same report. It writes
``# title``, the goal, a summary, then one ``##`` section per blueprint section with its tools'
findings (a dict as bullets, a list of rows as a table, text as a paragraph), each led by a
sentence of its own about what the finding holds. It never copies the blueprint's words into
the report as if they were findings: a section's **guidance** and the blueprint's
**instructions** are read for what the writer can act on, and acted on:

- guidance: the columns it names come first ("Revenue, operating margin and net income by year");
  "newest first" / "oldest first" / "largest first" order the rows; "every" / "all" shows every
  row; "trend", "growth", "over the years" add the trend, which is computed only over rows
  ordered in time (a column of years or dates whose values rise or fall row by row);
- instructions (:func:`read_instructions`): "never heard of the company" opens the summary with
  the subject in brief; "keep every figure as the data states it" shows values as given, unrounded
  and uncut; "in full" / "every" shows everything, "brief" / "concise" the first few; "factual",
  "no adjectives" is how it writes anyway. What it cannot act on offline, it lists for the run's
  instructions.md (an LLM writer reads all of it).

It acts on directives (:mod:`agents.blueprint.directives`): ``detail`` shows every fact and up
to :data:`FULL_ROWS` rows; ``section`` adds a section; ``keyword`` names the term in the
summary; ``fill`` gives an empty section a line. A table shown shorter than the finding says
so ("2 of 5 rows left out."; "… 3 more facts"); every row and fact is in the run's findings.json. A
cell is cut at a word's end, never inside a word.
Findings are tool output: every value is shown as one bounded printable line, and table cells
cannot break the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.blueprint import decision as deciding
from agents.blueprint.directives import Directive
from agents.blueprint.grounding import naming_facts, unechoed
from agents.blueprint.model import Blueprint, SectionSpec
from agents.blueprint.research import Finding
from agents.untrusted_text import one_line

BRIEF_FACTS, FULL_FACTS = 3, 40
BRIEF_ROWS, FULL_ROWS = 3, 25
BRIEF_TEXT, FULL_TEXT = 240, 2000
CELL, FULL_CELL, VERBATIM_CELL = 60, 200, 400
MAX_COLUMNS = 8
_TIME_NAME = re.compile(r"^(?:year|date|month|quarter|period|day|week|time|fiscal_year|fy)(?:_|$)"
                        r"|(?:_|^)(?:year|date)$",
                        re.IGNORECASE)
_YEARISH = re.compile(r"^(?:19|20|21)\d{2}(?:-\d{2}(?:-\d{2})?)?$|^(?:19|20|21)\d{2}-?q[1-4]$", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{3,}")
_INSTRUCTIONS = (
    ("introduce", re.compile(r"never heard|new to|introduc|unfamiliar|first time", re.IGNORECASE)),
    ("verbatim", re.compile(r"as the data states|as stated|verbatim|exactly as|unrounded|do not round|"
                            r"keep every figure", re.IGNORECASE)),
    ("full", re.compile(r"\b(?:in full|in detail|every (?:fact|row|detail|finding)|all (?:the )?(?:facts|rows|details|"
                        r"findings)|complete|detailed|exhaustive)\b", re.IGNORECASE)),
    ("brief", re.compile(r"\b(?:brief|concise|short|one[- ]page)\b", re.IGNORECASE)),
    ("factual", re.compile(r"factual|no adjectives|neutral|objective|plain", re.IGNORECASE)),
)


@dataclass(frozen=True)
class Reading:
    """What the offline writer takes from the blueprint's instructions, and what it cannot act on."""

    introduce: bool = False
    verbatim: bool = False
    full: bool = False
    brief: bool = False
    not_applied: tuple[str, ...] = ()


def read_instructions(texts: list[str]) -> Reading:
    """The instructions the offline writer acts on (see the module doc), and those it does not."""
    found: dict[str, bool] = {}
    left = []
    for text in texts:
        kinds = [kind for kind, pattern in _INSTRUCTIONS if pattern.search(text)]
        found.update({kind: True for kind in kinds})
        if not kinds:
            left.append(one_line(text, 200))
    return Reading(found.get("introduce", False), found.get("verbatim", False), found.get("full", False),
                   found.get("brief", False), tuple(left))


@dataclass(frozen=True)
class Style:
    """How much of each finding to show, how, and the terms that must stay in."""

    full: bool = False
    keywords: tuple[str, ...] = ()
    verbatim: bool = False

    def shown(self, items: list[Any], brief: int, full: int, *, every: bool = False) -> list[Any]:
        """The items to show: the first ``brief`` (``full``, or all with ``every``), and any that holds a keyword."""
        limit = FULL_ROWS * 4 if every else full if self.full else brief
        return [item for i, item in enumerate(items[:FULL_ROWS * 4])
                if i < limit or any(k in _compact(item).lower() for k in self.keywords)]


def write_report(blueprint: Blueprint, findings: list[Finding], directives: list[Directive]) -> str:
    """The report for ``blueprint`` from ``findings``, following ``directives`` and its instructions."""
    reading = read_instructions([d["text"] for d in directives if d["kind"] == "note"])
    style = Style(full=any(d["kind"] == "detail" for d in directives) or (reading.full and not reading.brief),
                  keywords=tuple(d["value"].lower() for d in directives if d["kind"] == "keyword"),
                  verbatim=reading.verbatim)
    fill = any(d["kind"] == "fill" for d in directives)
    by_tool = {finding["tool"]: finding for finding in findings}
    parts = [f"# {blueprint.title}", blueprint.goal.strip() or f"A report on {blueprint.subject}."]
    for section in blueprint.sections:
        parts += [f"## {section.title}", *_section_body(section, by_tool, style, fill, blueprint)]
    present = {section.title.lower() for section in blueprint.sections} | {"summary"}
    if blueprint.decision is not None and blueprint.decision.section.lower() not in present:
        present.add(blueprint.decision.section.lower())
        parts += [f"## {blueprint.decision.section}", _recommendation(blueprint, findings)]
    written = unechoed("\n".join(parts), blueprint).lower()  # the blueprint's words echoed are no mention
    unmentioned = [d["value"] for d in directives if d["kind"] == "keyword" and d["value"].lower() not in written]
    unmentioned += [d["value"] for d in directives if d["kind"] == "cite"]
    parts[2:2] = ["## Summary", _summary(blueprint, findings, list(dict.fromkeys(unmentioned)), reading)]
    for directive in directives:
        if directive["kind"] == "section" and directive["value"].lower() not in present:
            present.add(directive["value"].lower())
            parts += [f"## {directive['value']}",
                      f"The research for {blueprint.subject} found nothing specific for this section; it is kept "
                      "so that the report has the structure it was asked for."]
    return "\n\n".join(part for part in parts if part) + "\n"


def _summary(blueprint: Blueprint, findings: list[Finding], unmentioned: list[str], reading: Reading) -> str:
    found = [f["tool"] for f in findings if f["ok"]]
    failed = [f["tool"] for f in findings if not f["ok"]]
    text = (f"This report on {blueprint.subject} has {len(blueprint.sections)} section(s), drawn from "
            f"{len(found)} research finding(s){' (' + ', '.join(found) + ')' if found else ''}.")
    if reading.introduce:
        text = _introduction(blueprint.subject, findings) + " " + text
    if failed:
        text += f" Missing: the tool(s) {', '.join(failed)} returned nothing usable."
    cited = [(term, naming_facts(findings, term)) for term in unmentioned]
    for term, facts in cited:  # asked for, not shown yet: what the findings hold on it
        if facts:
            text += f" On {term}: " + "; ".join(f"{_label(key)} {_cell(value, 80)} ({tool})" for tool, key, value
                                                  in facts) + "."
    absent = [term for term, facts in cited if not facts]
    if absent:  # no finding names it: only then is it said that they hold nothing on it
        text += f" The research findings say nothing about {', '.join(absent)}."
    return text


def _recommendation(blueprint: Blueprint, findings: list[Finding]) -> str:
    """The decision the blueprint's rules take on the findings, else which findings would decide it."""
    if blueprint.decision is None:
        return deciding.deciding_findings(findings)
    return deciding.statement(blueprint.decision, deciding.decide(blueprint.decision, findings))


def _introduction(subject: str, findings: list[Finding]) -> str:
    """The subject in brief, from the first finding that holds facts, for a reader new to it."""
    facts = next((f["value"] for f in findings if f["ok"] and isinstance(f["value"], dict) and f["value"]), None)
    if facts is None:
        return f"{subject} in brief: the research holds no profile to introduce it with."
    items = "; ".join(f"{_label(key)} {_cell(value, 80)}" for key, value in list(facts.items())[:4])
    return f"{subject} in brief: {items}."


_DECIDING = re.compile(r"recommend|decision|decide|conclusion|verdict|go/no-go", re.IGNORECASE)


def _section_body(section: SectionSpec, by_tool: dict[str, Finding], style: Style, fill: bool,
                  blueprint: Blueprint) -> list[str]:
    body = [render_finding(by_tool[name], style, section.guidance) for name in section.tools if name in by_tool]
    decision = blueprint.decision
    if (decision is not None and section.title.lower() == decision.section.lower()) or \
            (decision is None and not section.tools and _DECIDING.search(section.title)):
        body.append(_recommendation(blueprint, list(by_tool.values())))
    elif not section.tools:
        body.append("No research finding covers this section: the offline writer draws no conclusion of its "
                    "own, and the facts it would rest on are in the sections above.")
    elif not any(body) and fill:
        body.append("No research finding covers this section.")
    return body


def render_finding(finding: Finding, style: Style, guidance: str = "") -> str:
    """One finding as markdown: what the tool returned, or why it returned nothing."""
    if not finding["ok"]:
        return f"_The tool {finding['tool']} failed: {one_line(finding['error'], 200)}._"
    value = finding["value"]
    if isinstance(value, dict):
        return f"The {finding['tool']} research holds {len(value)} fact(s).\n\n" + _bullets(list(value.items()), style)
    if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
        return _table_block(finding["tool"], value, style, guidance)
    if isinstance(value, list):
        return _bullets([(str(i + 1), item) for i, item in enumerate(value)], style)
    limit = FULL_TEXT if style.full or style.verbatim else BRIEF_TEXT
    return _whole_words(one_line(str(value), limit * 2), limit)


def _bullets(facts: list[tuple[Any, Any]], style: Style) -> str:
    shown = style.shown(facts, BRIEF_FACTS, FULL_FACTS)
    width = VERBATIM_CELL if style.verbatim else 200
    lines = [f"- **{_label(key)}**: {_cell(value, width, style.verbatim)}" for key, value in shown]
    if len(facts) > len(shown):
        lines.append(f"- … {len(facts) - len(shown)} more facts")
    return "\n".join(lines)


def _table_block(tool: str, rows: list[dict[str, Any]], style: Style, guidance: str) -> str:
    """A lead sentence, the table (ordered and shortened as the guidance and style say), what was left
    out, and the trend when the guidance asks for one and the rows are ordered in time."""
    columns = list(dict.fromkeys(key for row in rows[:FULL_ROWS * 4] for key in row))
    time = time_column(rows, columns)
    ordered, order = _ordered(rows, guidance, time, columns)
    wants_all = bool(re.search(r"\b(?:every|all|each)\b", guidance, re.IGNORECASE))
    shown = style.shown(ordered, BRIEF_ROWS, FULL_ROWS, every=wants_all)
    lead_column = time or columns[0]  # the rows' key (a year, a name) first, then what the guidance names
    named = [lead_column] + [c for c in _named_columns(columns, guidance) if c != lead_column]
    kept = (named + [c for c in columns if c not in named])[:MAX_COLUMNS]
    lead = f"The {tool} research holds {len(rows)} row(s)"
    if time is not None:
        lead += f" by {_label(time)}, from {_cell(ordered[-1 if order == 'newest first' else 0].get(time), 20)} " \
                f"to {_cell(ordered[0 if order == 'newest first' else -1].get(time), 20)}"
    parts = [lead + (f", {order}" if order else "") + ".", _table(shown, kept, style)]
    left_out = _shortened(len(rows), len(shown), len(columns), len(kept))
    if left_out:
        parts.append(left_out)
    if time is not None and (style.full or re.search(r"trend|growth|grow|over the years|by year|change", guidance,
                                                      re.IGNORECASE)):
        parts.append(trends(rows, time, kept))
    return "\n\n".join(part for part in parts if part)


def _shortened(rows: int, shown: int, columns: int, kept: int) -> str:
    left = [f"{rows - shown} of {rows} rows"] if shown < rows else []
    left += [f"{columns - kept} of {columns} columns"] if kept < columns else []
    return f"_{' and '.join(left)} left out._" if left else ""


def _table(rows: list[dict[str, Any]], columns: list[str], style: Style) -> str:
    cell = VERBATIM_CELL if style.verbatim else FULL_CELL if style.full else CELL
    lines = ["| " + " | ".join(_label(c) for c in columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, ""), cell, style.verbatim) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def _named_columns(columns: list[str], guidance: str) -> list[str]:
    """The columns whose name's words the guidance uses ("net income" for net_income_musd), in its order."""
    words = set(_WORD.findall(guidance.lower()))
    named = [(min(guidance.lower().find(w) for w in hits), column) for column in columns
             if (hits := [w for w in _WORD.findall(column.lower().replace("_", " ")) if w in words])]
    return [column for _, column in sorted(named)]


def _ordered(rows: list[dict[str, Any]], guidance: str, time: str | None,
             columns: list[str]) -> tuple[list[dict[str, Any]], str]:
    """The rows in the order the guidance asks for (and how it is said), else as given."""
    text = guidance.lower()
    if time is not None and re.search(r"newest|latest|most recent", text):
        return sorted(rows, key=lambda r: str(r.get(time, "")), reverse=True), "newest first"
    if time is not None and re.search(r"oldest|chronolog|earliest", text):
        return sorted(rows, key=lambda r: str(r.get(time, ""))), "oldest first"
    if re.search(r"largest|biggest|highest|most first", text):
        numeric = [c for c in _named_columns(columns, guidance) + columns if _numbers(rows, c) is not None]
        if numeric:
            return sorted(rows, key=lambda r: _number(r.get(numeric[0])) or 0.0, reverse=True), \
                f"largest {_label(numeric[0])} first"
    return rows, ""


def time_column(rows: list[dict[str, Any]], columns: list[str]) -> str | None:
    """A column that orders the rows in time: named for time or holding years or dates, whose values
    rise or fall row by row (None: the rows are not a time series, and no trend is computed)."""
    for column in columns:
        values = [str(row.get(column, "")).strip() for row in rows]
        if len(values) < 2 or not (_TIME_NAME.search(column) or all(_YEARISH.match(v) for v in values)):
            continue
        if values == sorted(values) and len(set(values)) == len(values):
            return column
        if values == sorted(values, reverse=True) and len(set(values)) == len(values):
            return column
    return None


def trends(rows: list[dict[str, Any]], time: str, columns: list[str]) -> str:
    """For each numeric column but the time: its first and last value in time order, and the change."""
    ordered = sorted(rows, key=lambda r: str(r.get(time, "")))
    first_at, last_at = _cell(ordered[0].get(time), 20), _cell(ordered[-1].get(time), 20)
    sentences = []
    for column in columns:
        numbers = _numbers(ordered, column) if column != time else None
        if numbers is None:
            continue
        first, last = numbers[0], numbers[-1]
        change = f" ({(last - first) / abs(first):+.1%})" if first else ""
        sentences.append(f"{_label(column).capitalize()} went from {first:.10g} in {first_at} to {last:.10g} in "
                         f"{last_at}{change}.")
    return "Over time: " + " ".join(sentences) if sentences else ""


def _numbers(rows: list[dict[str, Any]], column: str) -> list[float] | None:
    values = [_number(row.get(column)) for row in rows]
    return None if not values or any(v is None for v in values) else [float(v) for v in values if v is not None]


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


def _cell(value: Any, limit: int, verbatim: bool = False) -> str:
    """A value as one printable line that cannot end a table cell or start a heading (as given, verbatim)."""
    text = value if isinstance(value, str) else str(value) if verbatim else _compact(value)
    return _whole_words(one_line(text, limit * 2), limit).replace("|", "/").lstrip("# ")


def _whole_words(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word's end, never inside a word ("…" says it was cut)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 3 else cut).rstrip(" ,;:") + "…"


def _compact(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1000 else f"{value:g}"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_compact(v)}" for k, v in list(value.items())[:10])
    if isinstance(value, list):
        return ", ".join(_compact(v) for v in value[:10])
    return str(value)
