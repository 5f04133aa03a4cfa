"""The LLM coder over real HTTP (local scripted OpenAI / Ollama servers, tests/doubles), in
the agent's loop with a scripted sandbox (no Docker: nothing generated is run here).

Pins: the prompts follow seeds 000/001 (analysis, interface, cleaning rules; the error or
the diff report and the previous code on retry); a reply without code or a failed model
call is a failed attempt and the loop goes on; lessons of earlier runs reach the next
run's first prompt and its lessons.md; the key never reaches the run folder or a sandbox;
a missing key or an unreachable endpoint stops `run` with one line and exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from pydantic import SecretStr

from agents.bank_parser.coders import CoderFailed, FailureKind, Feedback, check_coder, make_coder
from agents.bank_parser.coders.llm import LLMCoder
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.target import resolve_target
from agents.lessons import ExecutionHistory, Lesson
from agents.llm.client import ChatClient
from agents.llm.config import LLMConfig
from agents.llm.providers import build_chat_model
from agents.ports.errors import ConfigError
from controller.entry.cli import main
from controller.platform.settings import Settings
from tests.conftest import ICICI
from tests.doubles.inprocess_statement import analyze_here as analyze
from tests.doubles.llm_servers import (
    Fail,
    OllamaServer,
    OpenAIServer,
    Reply,
    Stall,
    closed_port_url,
)
from tests.fakes import ScriptedSandbox, error_document, frame_document, parser_run_args

KEY = "sk-unit-test-key-0987654321"
EXPECTED = pd.read_csv(ICICI / "result.csv")
GOOD = "import pandas as pd\n\n\ndef parse(pdf_path):\n    return pd.DataFrame()\n"
BROKEN = "import pandas as pd\n\n\ndef parse(pdf_path):\n    return pd.DataFrame()['Date']\n"
ENV_NAMES = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "OLLAMA_API_KEY", "SBX_LLM__API_KEY",
             "SBX_CODER", "SBX_LLM__MODEL", "SBX_LLM__BASE_URL")


def fenced(code: str, prose: str = "Here is the parser.") -> str:
    return f"{prose}\n\n```python\n{code}```\n\nIt handles every page."


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No key from the developer's environment reaches these tests."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def analysis():  # noqa: ANN201
    return analyze(ICICI / "icici sample.pdf", ICICI / "result.csv")


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(models=("test-model",), require_key=KEY) as running:
        yield running


def coder_for(server, provider: str = "openai", lessons=(), **overrides) -> LLMCoder:  # noqa: ANN001
    values = {"timeout_seconds": 5.0, "max_retries": 1, "backoff_seconds": 0.0, **overrides}
    config = LLMConfig(provider, "test-model", server.base_url, api_key=SecretStr(KEY), **values)
    return LLMCoder(ChatClient(config, build_chat_model(config), sleep=lambda s: None), lessons=lessons)


def user_message(request) -> str:  # noqa: ANN001
    """The user message of a recorded OpenAI or Ollama chat request."""
    return next(m["content"] for m in request.body["messages"] if m["role"] == "user")


class TestGenerate:
    def test_first_prompt_carries_analysis_interface_and_rules(self, server, analysis):
        """Seed 000/001: headers, sample rows, expected schema, the exact interface, cleaning rules."""
        server.push(Reply(fenced(GOOD)))
        coder_for(server).generate(analysis)
        (request,) = server.chat_requests
        roles = [m["role"] for m in request.body["messages"]]
        prompt = user_message(request)
        assert roles == ["system", "user"]
        assert "icici sample.pdf" in prompt and "Date | Description | Debit Amt | Credit Amt | Balance" in prompt
        assert "- `Balance`: float64" in prompt and "01-08-2024,Salary Credit XYZ Pvt Ltd,1935.3,,6864.58" in prompt
        assert "def parse(pdf_path: str) -> pd.DataFrame:" in prompt and "## Data-cleaning rules" in prompt
        assert "Lessons from earlier runs" not in prompt

    def test_fenced_code_with_prose_is_taken_and_kept(self, server, analysis):
        """The code between the fences is the parser; prompt, reply and call record are artefacts."""
        server.push(Reply(fenced(GOOD), tokens_in=900, tokens_out=150))
        code = coder_for(server).generate(analysis)
        assert code.code == GOOD and code.strategy == "openai:test-model/generate"
        assert "Data-cleaning rules" in code.artefacts["prompt.md"] and code.artefacts["reply.md"].startswith("Here is")
        (call,) = json.loads(code.artefacts["llm.json"])
        assert (call["outcome"], call["tokens_in"], call["tokens_out"]) == ("ok", 900, 150)

    def test_lessons_reach_the_first_prompt(self, server, analysis):
        """Lessons from earlier runs on the target are in the first prompt (seed 003)."""
        server.push(Reply(fenced(GOOD)))
        lesson = Lesson("'Credit Amt' and 'Debit Amt' swapped", "mismatch", 2, 0.0)
        coder_for(server, lessons=[lesson]).generate(analysis)
        prompt = user_message(server.chat_requests[0])
        assert "Lessons from earlier runs" in prompt and "'Credit Amt' and 'Debit Amt' swapped" in prompt

    def test_reply_without_code_is_a_no_code_failure(self, server, analysis):
        """An apology is not a crash: CoderFailed(no_code) with the reply kept."""
        server.push(Reply("I'm sorry, but I can't help with that."))
        with pytest.raises(CoderFailed) as caught:
            coder_for(server).generate(analysis)
        assert caught.value.kind == FailureKind.NO_CODE and "holds no Python code" in caught.value.summary
        assert caught.value.artefacts["reply.md"].startswith("I'm sorry")

    def test_syntax_error_is_no_code_with_the_code_kept(self, server, analysis):
        """Code that does not parse never reaches a sandbox; the broken code is kept for the retry."""
        server.push(Reply(fenced("def parse(pdf_path):\n    return (\n")))
        with pytest.raises(CoderFailed) as caught:
            coder_for(server).generate(analysis)
        assert caught.value.kind == FailureKind.NO_CODE and "SyntaxError" in caught.value.summary
        assert caught.value.code.startswith("def parse(pdf_path):")

    def test_model_failure_is_an_llm_error(self, server, analysis):
        """5xx after the retries: CoderFailed(llm_error) naming the kind and the requests made."""
        server.push(Fail(500), Fail(500))
        with pytest.raises(CoderFailed) as caught:
            coder_for(server, max_retries=1).generate(analysis)
        assert caught.value.kind == FailureKind.LLM_ERROR
        assert caught.value.summary.startswith("server_error after 2 request(s)")
        assert len(json.loads(caught.value.artefacts["llm.json"])[0]["requests"]) == 2


class TestRefine:
    def feedback(self, kind: FailureKind, detail: str, attempt: int = 1, code: str = BROKEN) -> Feedback:
        return Feedback(attempt, kind, f"summary of {kind.value}", detail, code, "openai:test-model/generate")

    def test_execution_failure_sends_the_error_and_the_previous_code(self, server, analysis):
        """After a crash the prompt has the traceback and the code that raised it."""
        server.push(Reply(fenced(GOOD)))
        trace = "Traceback (most recent call last):\nKeyError: 'Date'"
        code = coder_for(server).refine(analysis, [self.feedback(FailureKind.EXECUTION_ERROR, trace)])
        prompt = user_message(server.chat_requests[0])
        assert trace in prompt and BROKEN.strip() in prompt and "failed when it ran" in prompt
        assert code.strategy.endswith("/fix-execution")

    def test_mismatch_sends_the_diff_report(self, server, analysis):
        """After a mismatch the prompt has the diff report, not an error."""
        server.push(Reply(fenced(GOOD)))
        diff = "shape: expected (100, 5), got (98, 5)"
        code = coder_for(server).refine(analysis, [self.feedback(FailureKind.MISMATCH, diff)])
        prompt = user_message(server.chat_requests[0])
        assert diff in prompt and "differs from the" in prompt and BROKEN.strip() in prompt
        assert code.strategy.endswith("/fix-mismatch")

    def test_no_code_sends_the_unusable_answer(self, server, analysis):
        """After a reply without code the prompt quotes it and asks for one fenced module."""
        server.push(Reply(fenced(GOOD)))
        coder_for(server).refine(analysis, [self.feedback(FailureKind.NO_CODE, "I cannot.", code="")])
        prompt = user_message(server.chat_requests[0])
        assert "could not be used" in prompt and "I cannot." in prompt

    def test_earlier_attempts_are_listed(self, server, analysis):
        """Every earlier failure is one line; the latest is shown in full."""
        server.push(Reply(fenced(GOOD)))
        history = [self.feedback(FailureKind.TIMEOUT, "killed", 1), self.feedback(FailureKind.MISMATCH, "diff", 2)]
        coder_for(server).refine(analysis, history)
        prompt = user_message(server.chat_requests[0])
        assert "- attempt 1 (openai:test-model/generate): timeout: summary of timeout" in prompt

    def test_after_an_llm_error_the_last_useful_failure_decides(self, server, analysis):
        """A failed call says nothing about the code: with nothing before it, the first prompt again."""
        server.push(Reply(fenced(GOOD)))
        code = coder_for(server).refine(analysis, [self.feedback(FailureKind.LLM_ERROR, "timeout", code="")])
        assert code.strategy.endswith("/generate")


def run_loop(settings: Settings, sandbox: ScriptedSandbox, coder, history=None, run_id: str = "r1"):  # noqa: ANN001, ANN201
    events = []
    summary = run_parser_agent(
            run_id=run_id, target=resolve_target("icici", ICICI.parent), **parser_run_args(settings, run_id),
                               sandbox=sandbox, image="img", coder=coder, on_event=events.append, history=history)
    return summary, events


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, runs_dir=tmp_path / "runs", parsers_dir=tmp_path / "parsers", max_attempts=3)


class TestLoop:
    def test_broken_code_then_fix_passes_on_attempt_2(self, server, settings):
        """Attempt 1 raises in the sandbox; the second request carries the error and the code; attempt 2 passes."""
        server.push(Reply(fenced(BROKEN)), Reply(fenced(GOOD, "Fixed: the column did not exist.")))
        sandbox = ScriptedSandbox([error_document("KeyError", "'Date'"), frame_document(EXPECTED)])
        summary, _ = run_loop(settings, sandbox, coder_for(server))
        assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["execution_error"]
        second = user_message(server.chat_requests[1])
        assert "KeyError: 'Date'" in second and "return pd.DataFrame()['Date']" in second
        assert sandbox.specs[1].inputs["parser.py"] == GOOD.encode()
        attempt = settings.runs_dir / "r1" / "attempts" / "2"
        assert {"parser.py", "prompt.md", "reply.md", "llm.json"} <= {p.name for p in attempt.iterdir()}

    def test_no_code_then_code_over_ollama(self, settings):
        """Ollama replies with prose only, then with code: attempt 1 is no_code (no sandbox), attempt 2 passes."""
        with OllamaServer([Reply("Let me think about the columns first."), Reply(fenced(GOOD))],
                          models=("test-model",)) as ollama:
            sandbox = ScriptedSandbox([frame_document(EXPECTED)])
            summary, events = run_loop(settings, sandbox, coder_for(ollama, provider="ollama"))
        assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["no_code"]
        assert len(sandbox.specs) == 1
        assert [(e.node, e.outcome) for e in events[:3]] == [("analyze", "ok"), ("generate", "no_code"),
                                                             ("refine", "ok")]
        assert "could not be used" in user_message(ollama.chat_requests[1])

    def test_timeout_is_a_failed_attempt_not_a_crash(self, server, settings):
        """A model that never answers costs one attempt (llm_error); the next one passes."""
        server.push(Stall(10), Reply(fenced(GOOD)))
        sandbox = ScriptedSandbox([frame_document(EXPECTED)])
        summary, _ = run_loop(settings, sandbox, coder_for(server, timeout_seconds=0.5, max_retries=0))
        assert summary.status == "passed" and summary.failures == ["llm_error"]
        calls = json.loads((settings.runs_dir / "r1" / "attempts" / "1" / "llm.json").read_text())
        assert calls[0]["outcome"] == "timeout"

    def test_rate_limit_then_success_within_one_attempt(self, server, settings):
        """A 429 is retried inside the attempt: one attempt, two requests in llm.json."""
        server.push(Fail(429, retry_after=0), Reply(fenced(GOOD)))
        summary, _ = run_loop(settings, ScriptedSandbox([frame_document(EXPECTED)]), coder_for(server))
        assert summary.status == "passed" and summary.attempts == 1
        (call,) = json.loads((settings.runs_dir / "r1" / "attempts" / "1" / "llm.json").read_text())
        assert [r["outcome"] for r in call["requests"]] == ["rate_limited", "ok"]

    def test_coder_failures_use_up_attempts(self, server, settings):
        """Only replies without code: the loop stops at max_attempts as failed, no sandbox run."""
        server.push(*[Reply("no idea")] * 3)
        sandbox = ScriptedSandbox([])
        summary, _ = run_loop(settings, sandbox, coder_for(server))
        assert summary.status == "failed" and summary.attempts == 3 and summary.failures == ["no_code"] * 3
        assert sandbox.specs == []

    def test_key_never_reaches_the_run_folder_or_a_sandbox(self, server, settings):
        """The key is sent to the model only: not in artefacts, parsers, specs or their environment."""
        server.push(Reply(fenced(BROKEN)), Reply(fenced(GOOD)))
        sandbox = ScriptedSandbox([error_document("KeyError", KEY[:4]), frame_document(EXPECTED)])
        run_loop(settings, sandbox, coder_for(server))
        assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"
        files = [p for root in (settings.runs_dir, settings.parsers_dir) for p in root.rglob("*") if p.is_file()]
        assert files and all(KEY.encode() not in p.read_bytes() for p in files)
        for spec in sandbox.specs:
            assert all(KEY.encode() not in data for data in spec.inputs.values()) and not spec.env


class TestLearning:
    def test_lessons_of_one_run_reach_the_next_runs_first_prompt(self, server, settings):
        """Run 1 swaps Debit/Credit, then passes; run 2's first prompt and lessons.md carry the lesson."""
        history = ExecutionHistory(settings.runs_dir / "lessons.sqlite")
        swapped = EXPECTED.copy()
        swapped[["Debit Amt", "Credit Amt"]] = EXPECTED[["Credit Amt", "Debit Amt"]].to_numpy()
        server.push(Reply(fenced(BROKEN)), Reply(fenced(GOOD)))
        run_loop(settings, ScriptedSandbox([frame_document(swapped), frame_document(EXPECTED)]),
                 coder_for(server, lessons=history.lessons("bank_parser", "icici")), history, "r1")
        assert "None yet" in (settings.runs_dir / "r1" / "lessons.md").read_text()

        server.push(Reply(fenced(GOOD)))
        lessons = history.lessons("bank_parser", "icici")
        summary, _ = run_loop(settings, ScriptedSandbox([frame_document(EXPECTED)]),
                              coder_for(server, lessons=lessons), history, "r2")
        assert summary.status == "passed"
        first_prompt_of_run_2 = user_message(server.chat_requests[2])
        assert "'Credit Amt' and 'Debit Amt' swapped" in first_prompt_of_run_2
        shown = (settings.runs_dir / "r2" / "lessons.md").read_text()
        assert "'Credit Amt' and 'Debit Amt' swapped" in shown and "fixed later by attempt 2" in shown


class TestMakeCoder:
    def test_offline_stays_the_default(self):
        """Nothing configured: the offline coder, and no preflight line."""
        coder = make_coder(Settings(_env_file=None))
        assert coder.name == "offline" and check_coder(coder) == ""

    def test_llm_coder_from_settings(self, server):
        """coder=openai with a base URL builds an LLM coder whose preflight finds the model."""
        settings = Settings(_env_file=None, coder="openai", llm={"base_url": server.base_url, "model": "test-model",
                                                                 "api_key": KEY})
        coder = make_coder(settings)
        assert isinstance(coder, LLMCoder) and coder.name == "openai:test-model"
        assert "model listed" in check_coder(coder)

    def test_gemini_without_key_is_refused(self):
        """No Gemini key: ConfigError before any client is built."""
        with pytest.raises(ConfigError, match="needs an API key"):
            make_coder(Settings(_env_file=None, coder="gemini"))


class TestPreflightFromTheCLI:
    @pytest.fixture
    def cli(self, tmp_path: Path, monkeypatch):  # noqa: ANN201
        """Run `python -m controller run` in-process with a clean working directory (no .env)."""
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("SBX_DATA_DIR", str(ICICI.parent))
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
        monkeypatch.setenv("SBX_LOG_FORMAT", "json")
        return lambda *args: main(["run", "--target", "icici", *args])

    def test_missing_key_is_one_line_and_exit_2(self, cli, capsys, tmp_path):
        """--coder gemini without a key: exit 2, one line naming the variables, nothing written."""
        assert cli("--coder", "gemini") == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: the gemini coder needs an API key") and "GOOGLE_API_KEY" in err
        assert "\n" not in err and "Traceback" not in err
        assert not (tmp_path / "runs").exists()

    def test_unreachable_endpoint_is_one_line_and_exit_2(self, cli, capsys, monkeypatch):
        """--coder ollama with nothing listening: exit 2 with how to start it."""
        monkeypatch.setenv("SBX_LLM__BASE_URL", closed_port_url())
        assert cli("--coder", "ollama") == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: cannot reach the Ollama server") and "ollama serve" in err
        assert "\n" not in err

    def test_model_not_served_is_exit_2(self, cli, capsys, monkeypatch, server):
        """--model that the server does not serve: exit 2 listing what it serves."""
        monkeypatch.setenv("SBX_LLM__BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        assert cli("--coder", "openai", "--model", "gpt-nonexistent") == 2
        err = capsys.readouterr().err
        assert "'gpt-nonexistent' is not served" in err and "test-model" in err and KEY not in err
