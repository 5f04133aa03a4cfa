"""The LLM writer and QA's LLM review, over real HTTP to a local scripted OpenAI-compatible
server (a TEST DOUBLE, tests/doubles/llm_servers.py); sandbox calls go to ScriptedCallSandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.blueprint import directives
from agents.blueprint.llm_roles import LLMRoles
from agents.blueprint.loading import load_target
from agents.blueprint.research import research
from agents.blueprint.run import run_blueprint_agent
from agents.blueprint.state import BlueprintContext
from agents.blueprint.writer import write_report
from agents.llm.client import ChatClient
from agents.ports.sandbox import SandboxLimits
from controller.platform.artefacts import RunArtefacts
from controller.platform.settings import PROJECT_ROOT
from tests.doubles.llm_servers import Fail, OpenAIServer, Reply
from tests.unit.agents.blueprint.fakes import ScriptedCallSandbox

TARGET = load_target(PROJECT_ROOT / "data", "acme-research")
FINDINGS = research(list(TARGET.blueprint.tools), TARGET.data, ScriptedCallSandbox({}), "img", SandboxLimits(), {})
#: A report that meets acme-research's rules, as a model might write it.
GOOD = write_report(TARGET.blueprint, FINDINGS,
                    [directives.make("detail"), *map(directives.note, TARGET.blueprint.instructions)])
NO = '```json\n{"passed": false, "feedback": "Say what the recall means for investors."}\n```'
YES = '```json\n{"passed": true, "feedback": ""}\n```'


def run(client: ChatClient, tmp_path: Path):  # noqa: ANN201
    context = BlueprintContext(run_id="llm", target="acme-research", blueprint=TARGET.blueprint, data=TARGET.data,
                               sandbox=ScriptedCallSandbox({}), image="img", limits=SandboxLimits(), max_attempts=3,
                               artefacts=RunArtefacts(tmp_path / "runs" / "llm"),
                               roles=LLMRoles(client, tmp_path / "blueprints"))
    events: list = []
    return run_blueprint_agent(context, on_event=events.append), events


def user(server: OpenAIServer, index: int) -> str:
    return server.chat_requests[index].body["messages"][-1]["content"]


class TestLLMRun:
    def test_the_reviews_feedback_reaches_the_writers_retry(self, server, client, tmp_path):
        """Rules pass, the review says no; the retry's prompt carries its feedback; then it passes."""
        server.push(Reply(f"```markdown\n{GOOD}```"), Reply(NO), Reply(f"```markdown\n{GOOD}```"), Reply(YES))
        summary, events = run(client, tmp_path)
        assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["llm_review"]
        assert summary.coder == "openai:m"
        assert "net_income_musd" in user(server, 0) and "- Write for an investor" in user(server, 0)
        assert "note: Say what the recall means for investors." in user(server, 2)
        assert [e.detail for e in events if e.node == "qa"][-1].endswith("LLM review passed")
        assert "by llm (openai:m)" in [e.detail for e in events if e.node == "writer"][0]

    def test_a_failing_model_falls_back_to_the_offline_writer(self, server, client, tmp_path):
        """The model fails for the writer and its review cannot be read: the run still ends, offline."""
        server.push(Fail(500), Reply("no verdict here"), Fail(500), Reply("still none"))
        summary, events = run(client, tmp_path)
        writers = [e.detail for e in events if e.node == "writer"]
        assert "by offline (openai:m: the model failed)" in writers[0]
        assert summary.status == "passed" and "LLM review skipped (no verdict)" in events[-2].detail


class TestReplies:
    def test_a_report_is_made_printable_and_bounded(self, server, client, tmp_path):
        server.push(Reply("```markdown\n# T\x1b[2J\n\n## A\n\n" + "x " * 80_000 + "\n```"))
        written = LLMRoles(client, tmp_path).write(TARGET.blueprint, FINDINGS, [])
        assert "\x1b" not in written.report and len(written.report) <= 100_001

    @pytest.mark.parametrize("reply", ['```json\n{"passed": "yes"}\n```', "```json\n{\"passed\": " + "[" * 50 + "\n```",
                                       '```json\n{"passed": true, "passed": false}\n```'])
    def test_an_unreadable_review_is_skipped(self, server, client, tmp_path, reply):
        server.push(Reply(reply))
        issue, said = LLMRoles(client, tmp_path).review(GOOD, TARGET.blueprint)
        assert issue is None and said == "LLM review skipped (an unreadable verdict)"
