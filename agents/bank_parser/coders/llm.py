"""The LLM coder: asks a language model (Gemini, OpenAI-compatible, Ollama) for the parser.

Behind the same :class:`~agents.bank_parser.coders.base.Coder` interface as the offline
coder. ``generate`` sends the analysis; ``refine`` sends the previous code with its error
or diff report (:mod:`.llm_prompts`). Lessons from earlier runs on the target (seed 003)
go into every prompt. The reply's code is extracted and checked with ``ast.parse`` on the
host (never run); a reply without usable code, or a model call that failed after its
retries, raises :class:`~agents.bank_parser.coders.base.CoderFailed`, which the loop
records as a failed attempt (``no_code`` / ``llm_error``) before trying again.

Each attempt leaves ``prompt.md``, ``reply.md`` and ``llm.json`` (requests, outcomes,
tokens, latency) in its folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders.base import CoderFailed, FailureKind, Feedback, GeneratedCode
from agents.bank_parser.coders.llm_prompts import PROMPTS, Prompt, generate_prompt, refine_prompt
from agents.lessons import Lesson
from agents.llm.client import ChatClient
from agents.llm.errors import LLMError
from agents.llm.extract import extract_python
from agents.llm.prompts import PromptFolder

PROMPT_FILE = "prompt.md"
REPLY_FILE = "reply.md"
CALLS_FILE = "llm.json"


class LLMCoder:
    """Writes parsers with a chat model; stateless between calls except for its call ledger."""

    def __init__(
        self, client: ChatClient, *, lessons: Sequence[Lesson] = (), prompts: PromptFolder = PROMPTS,
    ) -> None:
        self.client = client
        self.lessons = tuple(lessons)
        self.prompts = prompts
        self.name = client.config.label

    def generate(self, analysis: Analysis) -> GeneratedCode:
        """Ask for a first parser.

        Raises:
            CoderFailed: the model failed, or its reply held no usable code.
        """
        return self._ask(generate_prompt(analysis, self.lessons, self.prompts))

    def refine(self, analysis: Analysis, history: Sequence[Feedback]) -> GeneratedCode:
        """Ask for a corrected parser, given the latest failure (and a line per earlier one).

        Raises:
            CoderFailed: the model failed, or its reply held no usable code.
        """
        return self._ask(refine_prompt(analysis, history, self.lessons, self.prompts))

    def _ask(self, prompt: Prompt) -> GeneratedCode:
        first_call = len(self.client.ledger.calls)
        strategy = f"{self.name}/{prompt.step}"
        try:
            reply = self.client.complete(prompt.messages, purpose=prompt.step)
        except LLMError as exc:
            summary = f"{exc.kind.value} after {exc.tries} request(s): {exc.message}"
            raise CoderFailed(FailureKind.LLM_ERROR, summary, detail=exc.message, strategy=strategy,
                              artefacts=self._artefacts(prompt, None, first_call)) from None
        artefacts = self._artefacts(prompt, reply.text, first_call)
        found = extract_python(reply.text)
        if found.code is None:
            raise CoderFailed(FailureKind.NO_CODE, found.problem, detail=reply.text, code=found.candidate,
                              strategy=strategy, artefacts=artefacts)
        call = reply.call
        notes = (f"{found.how} code; {len(call.requests)} request(s), {call.tokens_in} tokens in, "
                 f"{call.tokens_out} out, {call.seconds:.1f}s")
        return GeneratedCode(found.code, strategy, notes, artefacts)

    def _artefacts(self, prompt: Prompt, reply: str | None, first_call: int) -> Mapping[str, str]:
        calls = [call.to_json() for call in self.client.ledger.since(first_call)]
        files = {PROMPT_FILE: prompt.transcript(), CALLS_FILE: json.dumps(calls, indent=2) + "\n"}
        if reply is not None:
            files[REPLY_FILE] = reply if reply.endswith("\n") else reply + "\n"
        return files
