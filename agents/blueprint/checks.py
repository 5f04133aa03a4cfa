"""The QA role: the blueprint's rules applied to a report, each failure with its fix.

Built-in checks are project code and run in-process (minimum length, required sections,
required keywords, markdown structure). Custom validators are the blueprint's code and run
in a sandbox each (:mod:`agents.blueprint.sandboxed`); a validator returns
``{"passed": bool, "message": str, "fix": {"kind": ..., "value": ...}}`` (``fix`` optional),
validated here: anything else is a failed check saying so. Every issue carries the
directive that would fix it, which the writer gets on its retry and the lessons store keeps.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from agents.blueprint import directives
from agents.blueprint.decision import decision_issues
from agents.blueprint.directives import Issue as Issue  # re-exported: the QA rules' issue
from agents.blueprint.grounding import grounded_issues, unechoed
from agents.blueprint.model import Blueprint, ValidatorSpec
from agents.blueprint.research import Finding
from agents.blueprint.sandboxed import Call, call_spec, run_call
from agents.ports.sandbox import Sandbox, SandboxLimits
from agents.untrusted_text import one_line

#: Why QA can fail, as summaries, lessons and metrics label it (bounded).
REASONS = ("too_short", "missing_section", "missing_keyword", "markdown", "false_absence", "unsupported_number",
           "decision", "validator", "llm_review", "no_go")
_WORD = re.compile(r"[^\W_]+(?:['’.,-][^\W_]+)*")  # "1,000", "x-y" and "it's" are one word each
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class Verdict(TypedDict):
    """QA's verdict on one report."""

    passed: bool
    issues: list[Issue]
    validators: int


def builtin_issues(report: str, blueprint: Blueprint, findings: list[Finding] | None = None) -> list[Issue]:
    """The in-process checks, in a fixed order; with the findings, those grounded in them too
    (:mod:`agents.blueprint.grounding`, the decision's in :mod:`agents.blueprint.decision`)."""
    issues = (_length(report, blueprint.qa.min_words) + _sections(report, blueprint.required_sections())
              + _keywords(unechoed(report, blueprint), blueprint.qa.required_keywords)
              + (markdown_issues(report) if blueprint.qa.markdown else []))
    if findings is not None:
        issues += grounded_issues(report, blueprint, findings) + decision_issues(report, blueprint, findings)
    return issues


def word_count(report: str) -> int:
    """Words as a reader counts them (numbers count; markdown marks do not)."""
    return len(_WORD.findall(report))


def _length(report: str, minimum: int) -> list[Issue]:
    words = word_count(report)
    if words >= minimum:
        return []
    why = f"the report needs at least {minimum} words"
    return [Issue(code="too_short", message=f"the report has {words} words; at least {minimum} are required",
                  fix=directives.make("detail", why=why))]


def headings(report: str) -> list[tuple[int, str]]:
    """(level, title) of every markdown heading outside code fences."""
    found, fenced = [], False
    for line in report.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            found.append((len(match[1]), match[2].strip()))
    return found


def _sections(report: str, required: list[str]) -> list[Issue]:
    titles = {title.lower() for _, title in headings(report)}
    return [Issue(code="missing_section", message=f"the section {title!r} is missing",
                  fix=directives.make("section", title)) for title in required if title.lower() not in titles]


def _keywords(report: str, required: list[str]) -> list[Issue]:
    text = report.lower()  # without the blueprint's own words echoed: an echo is not a mention
    return [Issue(code="missing_keyword", message=f"the report never mentions {keyword!r} (the blueprint's own "
                  "words repeated do not count)",
                  fix=directives.make("keyword", keyword)) for keyword in required if keyword.lower() not in text]


def markdown_issues(report: str) -> list[Issue]:
    """A title first, at least one section, no empty section, balanced code fences."""
    problems = []
    lines = [line for line in report.splitlines() if line.strip()]
    if not lines or not lines[0].startswith("# "):
        problems.append("it does not start with a '# ' title")
    if not any(level == 2 for level, _ in headings(report)):
        problems.append("it has no '## ' section")
    if sum(1 for line in report.splitlines() if line.lstrip().startswith("```")) % 2:
        problems.append("a code fence is never closed")
    empty = _empty_sections(lines)
    if empty:
        problems.append(f"section(s) without text: {', '.join(empty[:5])}")
    return [Issue(code="markdown", message=f"markdown: {problem}", fix=directives.make("fill", why=problem))
            for problem in problems]


def _empty_sections(lines: list[str]) -> list[str]:
    empty = []
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match and len(match[1]) >= 2:
            following = lines[index + 1] if index + 1 < len(lines) else None
            if following is None or _HEADING.match(following):
                empty.append(repr(match[2].strip()[:40]))
    return empty


class _Fix(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: str = Field(pattern=r"^(detail|section|keyword|fill)$")
    value: str = Field("", max_length=directives.MAX_VALUE)


class _ValidatorVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")
    passed: StrictBool  # "yes" or 1 is not a verdict
    message: str = Field("", max_length=2000)
    fix: _Fix | None = None


def validator_issue(spec: ValidatorSpec, ok: bool, value: Any, error: str) -> Issue | None:
    """A custom validator's result as an issue (None when it passed)."""
    if not ok:
        return Issue(code="validator", message=f"validator {spec.name} failed to run: {error}",
                     fix=directives.make("note", f"satisfy the validator {spec.name}"))
    try:
        verdict = _ValidatorVerdict.model_validate(value)
    except ValidationError as exc:
        problem = one_line(str(exc.errors()[0]["msg"]), 120)
        return Issue(code="validator", message=f"validator {spec.name} returned no verdict ({problem})",
                     fix=directives.make("note", f"satisfy the validator {spec.name}"))
    if verdict.passed:
        return None
    message = one_line(verdict.message, 300) or "it said no"
    fix = (directives.make(verdict.fix.kind, verdict.fix.value, why=f"validator {spec.name}") if verdict.fix
           else directives.make("note", message))
    return Issue(code="validator", message=f"validator {spec.name}: {message}", fix=fix)


def validator_issues(report: str, blueprint: Blueprint, data: dict[str, bytes], sandbox: Sandbox, image: str,
                     limits: SandboxLimits, labels: dict[str, str]) -> tuple[list[Issue], float]:
    """Each custom validator, in its own sandbox; the issues and the seconds spent in sandboxes."""
    issues, seconds = [], 0.0
    for spec in blueprint.qa.validators:
        call = Call("validator", spec.name, spec.code or "", {name: data[name] for name in spec.files}, report)
        result = run_call(sandbox, call_spec(image, call, limits, {**labels, "validator": spec.name}))
        seconds += result.seconds
        issue = validator_issue(spec, result.ok, result.value, result.error)
        if issue is not None:
            issues.append(issue)
    return issues, seconds


def judge(report: str, blueprint: Blueprint, data: dict[str, bytes], sandbox: Sandbox, image: str,
          limits: SandboxLimits, labels: dict[str, str], findings: list[Finding]) -> tuple[Verdict, float]:
    """Every check on ``report``: built-in and grounded in ``findings`` first, then the validators; the
    verdict and sandbox seconds."""
    issues = builtin_issues(report, blueprint, findings)
    custom, seconds = validator_issues(report, blueprint, data, sandbox, image, limits, labels)
    issues += custom
    return Verdict(passed=not issues, issues=issues, validators=len(blueprint.qa.validators)), seconds
