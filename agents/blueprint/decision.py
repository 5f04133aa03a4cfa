"""The blueprint's ``decision`` (issue 41): its rules applied to the findings, stated with reasons,
and QA's check that a report (the offline writer's or an LLM's) recommends what the rules choose.

The rules are tried in order; the first whose conditions all hold chooses, else the ``default``.
Each condition reads one finding: a fact of a dict (``field``), or over a list of rows a count,
sum, min, max or mean (of the rows ``where`` names). Every figure the statement gives is the
finding's, or derived from it by the rule that names the derivation ("2 of 5 rows", "the mean of
…"), so it passes QA's number rule. Without a ``decision``, :func:`deciding_findings` says plainly
which findings a decision would rest on; the writer draws no conclusion of its own.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.blueprint import directives
from agents.blueprint.directives import Issue
from agents.blueprint.model import Blueprint, Condition, DecisionSpec
from agents.blueprint.research import Finding
from agents.untrusted_text import one_line

_OPS: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
    "<": (operator.lt, "below"), "<=": (operator.le, "at most"), ">": (operator.gt, "above"),
    ">=": (operator.ge, "at least"), "==": (operator.eq, "equal to"), "!=": (operator.ne, "other than"),
}
_RECOMMEND = re.compile(r"recommend", re.IGNORECASE)
MAX_FACTS = 6


@dataclass(frozen=True)
class Measure:
    """One condition read on the findings: what was observed, whether it holds, and it said in words."""

    observed: float | str | None
    holds: bool
    text: str


@dataclass(frozen=True)
class Decision:
    """What the rules chose from the findings, and why."""

    choice: str
    rule: int | None
    """The 1-based rule that chose (None: no rule held, the default)."""
    reasons: list[str]
    passed_over: list[str]
    """For each earlier rule that did not hold: its choice and the first condition that failed."""


def measure(condition: Condition, findings: list[Finding]) -> Measure:
    """``condition`` on the findings (a missing or failed finding never holds)."""
    finding = next((f for f in findings if f["tool"] == condition.tool), None)
    if finding is None or not finding["ok"]:
        return Measure(None, False, f"the tool {condition.tool} found nothing")
    observed, what = _observe(condition, finding["value"])
    test, words = _OPS[condition.op]
    threshold = condition.value
    if observed is None:
        return Measure(None, False, f"{what} is not in the findings")
    if isinstance(threshold, float) and isinstance(observed, float):
        holds = test(observed, threshold)
    else:
        holds = test(str(observed).lower(), str(threshold).lower()) if condition.op in ("==", "!=") else False
    shown = _figure(observed) if isinstance(observed, float) else f"'{one_line(observed, 60)}'"
    limit = _figure(threshold) if isinstance(threshold, float) else f"'{threshold}'"
    return Measure(observed, holds, f"{what} is {shown}, {'' if holds else 'not '}{words} {limit}")


def _observe(condition: Condition, value: Any) -> tuple[float | str | None, str]:
    """The observed figure and how it is named ("on time rate pct (scorecard)", "2 of 5 rows of …")."""
    label = condition.field.replace("_", " ")
    if isinstance(value, dict):
        for part in condition.field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return _scalar(value), f"{label} ({condition.tool})"
    rows = [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []
    chosen = [r for r in rows if all(str(r.get(k, "")).strip().lower() == v.strip().lower()
                                     for k, v in condition.where.items())]
    where = " and ".join(f"{k.replace('_', ' ')} {v}" for k, v in condition.where.items())
    of = f"rows of {condition.tool}" + (f" with {where}" if where else "")
    if condition.aggregate in ("count", "value"):
        return float(len(chosen)), f"the count of {of} ({len(chosen)} of {len(rows)} rows)"
    numbers = [n for n in (_number(r.get(condition.field)) for r in chosen) if n is not None]
    if not numbers:
        return None, f"the {condition.aggregate} of {label} over the {of}"
    figure = {"sum": sum(numbers), "min": min(numbers), "max": max(numbers),
              "mean": sum(numbers) / len(numbers)}[condition.aggregate]
    return figure, f"the {condition.aggregate} of {label} over {len(numbers)} {of}"


def _scalar(value: Any) -> float | str | None:
    if value is None or isinstance(value, dict | list):
        return None
    number = _number(value)
    return number if number is not None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(str(value).replace(",", "").rstrip("%"))
    except ValueError:
        return None


def _figure(value: float) -> str:
    return f"{value:.10g}" if value == int(value) or abs(value) >= 1 else f"{value:.4g}"


def decide(spec: DecisionSpec, findings: list[Finding]) -> Decision:
    """The first rule whose conditions all hold chooses; else the default."""
    passed_over: list[str] = []
    for index, rule in enumerate(spec.rules, start=1):
        measures = [measure(c, findings) for c in rule.when]
        failed = next((m for m in measures if not m.holds), None)
        if failed is None:
            return Decision(rule.choose, index, [m.text for m in measures] + ([rule.because] if rule.because else []),
                            passed_over)
        passed_over.append(f"{rule.choose}: {failed.text}")
    return Decision(spec.default, None, [], passed_over)


def observed_numbers(blueprint: Blueprint, findings: list[Finding]) -> list[float]:
    """Every figure the decision's conditions read or derive (QA's number rule accepts them)."""
    if blueprint.decision is None:
        return []
    found = [measure(c, findings) for r in blueprint.decision.rules for c in r.when]
    return [m.observed for m in found if isinstance(m.observed, float)]


def statement(spec: DecisionSpec, decision: Decision) -> str:
    """The decision in markdown: the choice, the findings that chose it, the options passed over."""
    why = (f"Decision rule {decision.rule} holds on the findings: " + "; ".join(decision.reasons) + "."
           if decision.rule is not None
           else "No decision rule holds on the findings, so the blueprint's default applies.")
    parts = [f"The question: {spec.question}", f"Recommendation: **{decision.choice}**.", why]
    if decision.passed_over:
        parts.append("\n".join(f"- Not chosen, {over}." for over in decision.passed_over))
    return "\n\n".join(parts)


def deciding_findings(findings: list[Finding]) -> str:
    """Without decision rules: plainly, which findings a decision would rest on (their figures)."""
    named = []
    for finding in findings:
        if not finding["ok"]:
            continue
        value = finding["value"]
        if isinstance(value, dict):
            figures = [f"{k.replace('_', ' ')} {one_line(str(v), 40)}" for k, v in value.items()
                       if _number(v) is not None][:MAX_FACTS]
            named.append(f"{finding['tool']} ({'; '.join(figures)})" if figures else finding["tool"])
        elif isinstance(value, list):
            named.append(f"{finding['tool']} ({len(value)} rows)")
    rest = f"the findings it would rest on are {', '.join(named)}" if named else "no finding holds figures to decide on"
    return ("The blueprint gives no decision rules, so this report recommends no option of its own: "
            f"{rest}. A `decision` in the blueprint (its options, and rules over these findings) makes the "
            "writer state one, with its reasons.")


def decision_issues(report: str, blueprint: Blueprint, findings: list[Finding]) -> list[Issue]:
    """The report must recommend the option the rules choose, and no other."""
    if blueprint.decision is None:
        return []
    decision = decide(blueprint.decision, findings)
    said = recommended(report, blueprint.decision.options)
    if said == [decision.choice.lower()]:
        return []
    why = "; ".join(decision.reasons)[:200] or "no rule holds: the default"
    told = f"the report recommends {', '.join(repr(s) for s in said)}" if said else "the report recommends no option"
    return [Issue(code="decision", message=f"the decision rules choose {decision.choice!r} from the findings ({why}); "
                  f"{told}", fix=directives.make("decide", decision.choice))]


def recommended(report: str, options: list[str]) -> list[str]:
    """The options the report's sentences that recommend name (longest first, so 'do not renew' is not
    also 'renew'), lower case, in order."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n", report):
        if not _RECOMMEND.search(sentence):
            continue
        text = sentence.lower()
        for option in sorted(options, key=len, reverse=True):
            pattern = rf"(?<![a-z0-9]){re.escape(option.lower())}(?![a-z0-9])"
            if re.search(pattern, text):
                found.append(option.lower())
                text = re.sub(pattern, " ", text)
    return list(dict.fromkeys(found))
