"""The LLM coder of the Idris agent (seed 004): a chat model writes and repairs the module.

Implements :class:`~agents.idris.coder.IdrisCoder` with the prompts in ``prompts/``:
``generate`` sends the analysis (``analysis_<Project>.md``'s markdown) with the five-layer
requirements and a reference example; ``fix`` sends the module, ``idris2 --check``'s
diagnostics and the seed's list of common errors. The module is taken from the reply's
``idris`` block (the host cannot parse Idris: the check in the sandbox is the test).

The Idris loop has no failed-attempt path for a coder that produced nothing, so a reply
without a module is asked again once, in the same conversation, with a reminder of the
format; if the model still gives no module, or the model call fails after its retries,
the coder raises :class:`~agents.idris.coder.CoderExhausted` and the run ends as failed
with that reason instead of crashing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agents.idris.coder import CheckFeedback, CoderExhausted, IdrisCode
from agents.idris.model import DocumentAnalysis
from agents.idris.report import analysis_markdown
from agents.lessons import Lesson, render_lessons
from agents.llm.client import ChatClient, ChatMessage
from agents.llm.errors import LLMError
from agents.llm.extract import Extraction, extract_fenced
from agents.llm.preflight import checked_client
from agents.llm.prompts import PromptFolder
from agents.ports.config import AgentConfig

PROMPTS = PromptFolder(Path(__file__).resolve().parent / "prompts")
IDRIS_TAGS = frozenset({"idris", "idris2", "idr"})
DIAGNOSTICS_CHARS = 4000
REMINDER = ("위 답변에서 Idris2 모듈을 찾지 못했습니다 ({problem}). "
            "`module Domains.{project}` 로 시작하는 완전한 모듈을 ```idris 블록 하나로 다시 보내주세요.")


class LLMIdrisCoder:
    """Writes and repairs ``Domains.<Project>`` modules with a chat model."""

    def __init__(self, client: ChatClient, *, lessons: Sequence[Lesson] = (), prompts: PromptFolder = PROMPTS) -> None:
        self.client = client
        self.lessons = tuple(lessons)
        self.prompts = prompts
        self.name = client.config.label

    def generate(self, analysis: DocumentAnalysis, project: str) -> IdrisCode:
        """A first module from the analysis.

        Raises:
            CoderExhausted: the model failed or gave no module (twice).
        """
        user = self.prompts.template("generate").render({
            "analysis": analysis_markdown(analysis, project), "project_name": project,
            "example": self.prompts.template("example").render({}).rstrip(), "lessons": self._lessons(),
        })
        return self._ask(user, project, "generate")

    def fix(self, analysis: DocumentAnalysis, project: str, history: Sequence[CheckFeedback]) -> IdrisCode:
        """The module repaired from the latest check's diagnostics.

        Raises:
            CoderExhausted: the model failed or gave no module (twice).
        """
        latest = history[-1]
        user = self.prompts.template("fix").render({
            "code": latest.code.source.rstrip(), "diagnostics": diagnostics_text(latest),
            "attempt": str(latest.attempt), "lessons": self._lessons(),
        })
        return self._ask(user, project, "fix")

    def _ask(self, user: str, project: str, step: str) -> IdrisCode:
        messages = [ChatMessage("system", self.prompts.template("system").render({})), ChatMessage("user", user)]
        found, reply = self._complete(messages, step)
        if not found.ok:
            reminder = REMINDER.format(problem=found.problem, project=project)
            messages += [ChatMessage("assistant", reply), ChatMessage("user", reminder)]
            found, reply = self._complete(messages, f"{step}-again")
        if found.code is None:
            raise CoderExhausted(f"{self.name} gave no Idris module twice ({found.problem})")
        call = self.client.ledger.calls[-1]
        note = (f"{self.name}/{step}: {found.how} module, {call.tokens_in} tokens in, "
                f"{call.tokens_out} out, {call.seconds:.1f}s")
        return IdrisCode(found.code, f"llm-{step}", (note,))

    def _complete(self, messages: list[ChatMessage], purpose: str) -> tuple[Extraction, str]:
        try:
            reply = self.client.complete(messages, purpose=purpose)
        except LLMError as exc:
            raise CoderExhausted(f"{self.name} failed: {exc.kind.value} after {exc.tries} request(s): "
                                 f"{exc.message}") from None
        return extract_fenced(reply.text, IDRIS_TAGS, "module "), reply.text

    def _lessons(self) -> str:
        if not self.lessons:
            return ""
        return "\n" + self.prompts.template("lessons").render({"items": render_lessons(self.lessons)})


def diagnostics_text(feedback: CheckFeedback) -> str:
    """What the fix prompt shows of a failed check: the parsed errors, then the raw transcript's tail."""
    parts = [feedback.detail()]
    if feedback.transcript_tail and feedback.transcript_tail.strip() not in parts[0]:
        parts.append(feedback.transcript_tail.strip())
    text = "\n\n".join(p for p in parts if p)
    return text if len(text) <= DIAGNOSTICS_CHARS else "...\n" + text[-DIAGNOSTICS_CHARS:]


def analysis_prompt(document_type: str, document_text: str, prompts: PromptFolder = PROMPTS) -> str:
    """Seed 004's document-analysis prompt, for an analysis done by a model (the agent's own
    analysis is offline; this is the template such a node would send)."""
    return prompts.template("analyze").render({"document_type": document_type, "document_text": document_text})


def make_llm_idris_coder(settings: AgentConfig) -> LLMIdrisCoder:
    """The LLM coder ``settings.coder`` names, checked against its endpoint before the run.

    Raises:
        ConfigError: no key where one is needed, a rejected key, a model not served.
        LLMUnavailable: the endpoint does not answer.
    """
    return LLMIdrisCoder(checked_client(settings))
