"""The Idris agent's LLM coder over real HTTP (a local scripted OpenAI-compatible server,
tests/doubles): seed 004's prompts, the module taken from the reply, diagnostics fed back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.idris.analysis import analyze_document
from agents.idris.coder import CheckFeedback, CoderExhausted, IdrisCode
from agents.idris.diagnostics import parse_transcript
from agents.idris.document import DocumentText
from agents.idris.llm_coder import LLMIdrisCoder, analysis_prompt
from agents.lessons import Lesson
from agents.llm.client import ChatClient
from agents.llm.config import LLMConfig
from agents.llm.providers import build_chat_model
from tests.doubles.llm_servers import Fail, OpenAIServer, Reply
from tests.unit.agents.idris.fakes import TRANSCRIPTS, transcript

CONTRACT = "용역계약서\n\n제1조 (계약금액) 공급가액 48,000,000원\n부가세 4,800,000원\n총액 52,800,000원\n"
MODULE = "module Domains.ServiceContract\n\n%default total\n\npublic export\ntotal' : Nat\ntotal' = 52800000\n"


@pytest.fixture(scope="module")
def analysis():  # noqa: ANN201
    return analyze_document(DocumentText(Path("contract.txt"), "text", CONTRACT, 1), "contract")


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(models=("m",)) as running:
        yield running


def coder(server: OpenAIServer, lessons=()) -> LLMIdrisCoder:  # noqa: ANN001
    config = LLMConfig("openai", "m", server.base_url, timeout_seconds=5, max_retries=0, api_key=SecretStr("k" * 12))
    return LLMIdrisCoder(ChatClient(config, build_chat_model(config)), lessons=lessons)


def user(request) -> str:  # noqa: ANN001
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"][-1]


class TestGenerate:
    def test_five_layer_prompt_with_the_analysis(self, server, analysis):
        """The prompt asks for module Domains.<Project>, Layers 1-5, and carries the analysis."""
        server.push(Reply(f"다음은 모듈입니다:\n```idris\n{MODULE}```\n"))
        code = coder(server).generate(analysis, "ServiceContract")
        prompt = user(server.chat_requests[0])
        assert "module Domains.ServiceContract" in prompt and "Layer 5" in prompt
        assert "48,000,000" in prompt and "mkUnitPrice" in prompt
        assert code.source == MODULE and code.style == "llm-generate" and code.notes[0].startswith("openai:m/generate")

    def test_lessons_in_the_prompt(self, server, analysis):
        """Lessons from earlier runs are listed in the generate prompt."""
        server.push(Reply(f"```idris\n{MODULE}```"))
        coder(server, [Lesson("Show Money 구현 누락", "errors", 1, 0.0)]).generate(analysis, "ServiceContract")
        assert "Show Money 구현 누락" in user(server.chat_requests[0])

    def test_no_module_is_asked_again_once(self, server, analysis):
        """A reply without a module gets one reminder in the same conversation, then the module is used."""
        server.push(Reply("먼저 문서를 검토하겠습니다."), Reply(f"```idris\n{MODULE}```"))
        code = coder(server).generate(analysis, "ServiceContract")
        again = server.chat_requests[1].body["messages"]
        assert code.source == MODULE and again[-2]["role"] == "assistant" and "```idris" in again[-1]["content"]

    def test_still_no_module_ends_the_run_cleanly(self, server, analysis):
        """Twice no module: CoderExhausted (the loop ends as failed), not a crash."""
        server.push(Reply("글쎄요."), Reply("모르겠습니다."))
        with pytest.raises(CoderExhausted, match="gave no Idris module twice"):
            coder(server).generate(analysis, "ServiceContract")

    def test_model_failure_ends_the_run_cleanly(self, server, analysis):
        """A model error after the retries is CoderExhausted with the reason."""
        server.push(Fail(503))
        with pytest.raises(CoderExhausted, match="server_error after 1 request"):
            coder(server).generate(analysis, "ServiceContract")


class TestFix:
    def test_fix_prompt_has_code_diagnostics_and_common_errors(self, server, analysis):
        """Seed 004's fix prompt: the module, idris2's errors, and the list of common errors."""
        raw = transcript(sorted(p.name for p in TRANSCRIPTS.iterdir() if p.name.startswith("error-"))[0])
        parsed = parse_transcript(raw)
        feedback = CheckFeedback(1, "errors", "1 error", parsed.errors, IdrisCode(MODULE, "llm-generate"), raw[-4000:])
        server.push(Reply(f"```idris\n{MODULE}```"))
        code = coder(server).fix(analysis, "ServiceContract", [feedback])
        prompt = user(server.chat_requests[0])
        assert MODULE.strip() in prompt and "Can't find an implementation for Show Nat" in prompt
        assert parsed.errors[0].message.splitlines()[0] in prompt
        assert code.style == "llm-fix"


def test_analysis_prompt_follows_the_seed():
    """The document-analysis prompt asks for type, fields, calculation rules and constraints."""
    prompt = analysis_prompt("contract", CONTRACT)
    assert "한국 법률/회계 문서 전문가" in prompt and "계산 규칙" in prompt and "48,000,000원" in prompt
