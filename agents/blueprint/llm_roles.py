"""The writer and QA's quality review done by the configured LLM (seed 003's LLM roles).

With ``SBX_CODER`` set to a provider, the writer asks the model for the report (the blueprint,
the findings as JSON, every directive including QA's fixes) and QA adds the seed's qualitative
check after the rules and validators have passed. The model's replies are untrusted text: the
report is taken from its ```markdown block and made printable and bounded; the review from its
```json block with the bounded decoder. A model that fails or answers nothing usable does not
stop the run: the offline writer writes instead, and a review that cannot be read is skipped;
each says so in the node's detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from agents.blueprint import directives
from agents.blueprint.checks import Issue
from agents.blueprint.decision import decide, deciding_findings, statement
from agents.blueprint.directives import Directive
from agents.blueprint.model import Blueprint
from agents.blueprint.prose import CACHE_FOLDER, PROMPTS, ProseParser
from agents.blueprint.research import Finding
from agents.blueprint.writer import write_report
from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.llm.client import ChatClient, ChatMessage
from agents.llm.errors import LLMError
from agents.llm.extract import extract_fenced
from agents.llm.preflight import checked_client
from agents.ports.config import AgentConfig
from agents.untrusted_text import one_line, printable

MAX_REPORT_CHARS = 100_000
MAX_FINDINGS_CHARS = 20_000
REVIEW_BOUNDS = JSONBounds(max_bytes=16 * 1024, max_depth=3, max_values=50)


class _Review(BaseModel):
    model_config = ConfigDict(extra="ignore")
    passed: StrictBool
    feedback: str = Field("", max_length=2000)


@dataclass(frozen=True)
class Written:
    """A report and how it was written (``llm``, or ``offline`` with why the model was not used)."""

    report: str
    how: str


class LLMRoles:
    """The writer, the quality review and the prose parser of one model."""

    def __init__(self, client: ChatClient, prose_cache: Path) -> None:
        self.client = client
        self.name = client.config.label
        self.prose = ProseParser(client, prose_cache).parse

    def write(self, blueprint: Blueprint, findings: list[Finding], given: list[Directive]) -> Written:
        """The model's report, or the offline writer's when the model gives none."""
        sections = "\n".join(f"- {s.title}: {s.guidance or 'as the findings allow'} "
                             f"(tools: {', '.join(s.tools) or '-'})"
                             for s in blueprint.sections)
        user = PROMPTS.template("write").render({
            "title": blueprint.title, "goal": blueprint.goal, "subject": blueprint.subject, "sections": sections,
            "findings": json.dumps(findings, ensure_ascii=False)[:MAX_FINDINGS_CHARS],
            "instructions": "\n".join(f"- {d['text']}" for d in given) or "- (none)",
            "decision": decision_brief(blueprint, findings),
        })
        reply = self._ask(user, "write")
        found = extract_fenced(reply, frozenset({"markdown", "md"}), "# ") if reply else None
        if found is None or found.code is None:
            why = found.problem if found is not None else "the model failed"
            return Written(write_report(blueprint, findings, given), f"offline ({self.name}: {one_line(why, 120)})")
        return Written(printable(found.code, MAX_REPORT_CHARS, tail=False).strip() + "\n", f"llm ({self.name})")

    def review(self, report: str, blueprint: Blueprint) -> tuple[Issue | None, str]:
        """QA's qualitative check: an issue when the model says no; and what happened, in words."""
        user = PROMPTS.template("review").render({"goal": blueprint.goal or blueprint.title,
                                                  "report": report[:MAX_REPORT_CHARS]})
        reply = self._ask(user, "review")
        found = extract_fenced(reply, frozenset({"json"}), '"passed"') if reply else None
        if found is None or found.code is None:
            return None, "LLM review skipped (no verdict)"
        try:
            verdict = _Review.model_validate(loads_bounded(found.code.encode("utf-8"), REVIEW_BOUNDS))
        except (BoundedJSONError, ValidationError):
            return None, "LLM review skipped (an unreadable verdict)"
        if verdict.passed:
            return None, "LLM review passed"
        feedback = one_line(verdict.feedback, 300) or "the reviewer found the report wanting"
        return Issue(code="llm_review", message=f"LLM review: {feedback}", fix=directives.make("note", feedback)), \
            "LLM review failed"

    def _ask(self, user: str, purpose: str) -> str:
        messages = [ChatMessage("system", PROMPTS.template("system_roles").render({})), ChatMessage("user", user)]
        try:
            return self.client.complete(messages, purpose=purpose).text
        except LLMError:
            return ""


def make_llm_roles(settings: AgentConfig) -> LLMRoles:
    """The roles of the model ``settings.coder`` names, checked against its endpoint first.

    Raises:
        ConfigError: no key, a rejected key, a model not served. LLMUnavailable: no endpoint.
    """
    return LLMRoles(checked_client(settings), settings.runs_dir / CACHE_FOLDER)


def decision_brief(blueprint: Blueprint, findings: list[Finding]) -> str:
    """What the writer is told of the decision: the rules' choice on the findings, in the section
    that states it; without a ``decision``, to recommend nothing and say which findings would decide."""
    if blueprint.decision is None:
        return f"(the blueprint asks for none) {deciding_findings(findings)}"
    spec = blueprint.decision
    return f"In the section '{spec.section}':\n{statement(spec, decide(spec, findings))}"
