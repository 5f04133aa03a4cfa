"""A natural-language blueprint through the configured LLM, over real HTTP to a local scripted
OpenAI-compatible server (a TEST DOUBLE, tests/doubles/llm_servers.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.blueprint.agent import BlueprintAgent
from agents.blueprint.prose import ProseParser
from agents.llm.client import ChatClient
from agents.ports.config import AgentConfig, LLMSettings
from agents.ports.errors import ConfigError
from controller.platform.settings import PROJECT_ROOT
from tests.doubles.llm_servers import Fail, Reply

BLUEPRINT = (PROJECT_ROOT / "data" / "acme-research" / "blueprint.json").read_text()
PROSE = "Research Acme Corp for an investor: who they are, their numbers, the latest news.\n"


def parser(client: ChatClient, tmp_path: Path) -> ProseParser:
    return ProseParser(client, tmp_path / "blueprints")


class TestProseParser:
    def test_the_blueprint_comes_from_the_json_block_and_is_asked_once(self, server, client, tmp_path):
        """The prompt carries the request and the data files; a second parse of the same prose is cached."""
        server.push(Reply(f"Here it is:\n```json\n{BLUEPRINT}```\n"))
        first = parser(client, tmp_path).parse(PROSE, ["company.json", "news.json"], tmp_path / "blueprint.md")
        again = parser(client, tmp_path).parse(PROSE, ["company.json", "news.json"], tmp_path / "blueprint.md")
        assert first == again and first.name == "acme-research" and len(server.chat_requests) == 1
        prompt = server.chat_requests[0].body["messages"][-1]["content"]
        assert PROSE.strip() in prompt and "company.json, news.json" in prompt

    def test_a_reply_without_a_blueprint_is_one_line(self, server, client, tmp_path):
        server.push(Reply("I would research the company first."))
        with pytest.raises(ConfigError, match="gave no blueprint for .*blueprint.md") as info:
            parser(client, tmp_path).parse(PROSE, [], tmp_path / "blueprint.md")
        assert "\n" not in info.value.one_line()

    def test_an_invalid_blueprint_names_the_field(self, server, client, tmp_path):
        bad = json.loads(BLUEPRINT)
        bad["sections"], bad["scenario"] = [], "custom"
        server.push(Reply(f"```json\n{json.dumps(bad)}\n```"))
        with pytest.raises(ConfigError, match="blueprint.md: blueprint: a custom blueprint needs sections"):
            parser(client, tmp_path).parse(PROSE, [], tmp_path / "blueprint.md")

    def test_a_model_failure_is_one_line(self, server, client, tmp_path):
        server.push(Fail(500))
        with pytest.raises(ConfigError, match="could not turn .* into a blueprint: server_error"):
            parser(client, tmp_path).parse(PROSE, [], tmp_path / "blueprint.md")


class TestPlanWithAnLLM:
    def test_a_prose_target_plans_through_the_model(self, server, client, tmp_path):
        """coder=openai: the endpoint is checked, the prose becomes the workflow, the model writes."""
        data = tmp_path / "data"
        shutil.copytree(PROJECT_ROOT / "data" / "acme-research", data / "acme")
        (data / "acme" / "blueprint.json").unlink()
        (data / "acme" / "blueprint.md").write_text(PROSE)
        server.push(Reply(f"```json\n{BLUEPRINT}```"))
        config = AgentConfig(data_dir=data, runs_dir=tmp_path / "runs", coder="openai",
                             llm=LLMSettings(model="m", base_url=server.base_url, api_key=SecretStr("k" * 12)))
        plan = BlueprintAgent().plan("acme", config, None)
        assert plan.record["workflow"] == "acme-research" and len(plan.inputs["target"].data) == 3
        assert plan.notes[0].startswith("writer and QA review by openai:m") and plan.coder_name == "openai:m"
        assert list((tmp_path / "runs" / "blueprints").glob("*.json"))
