"""The roles with a language model, over real HTTP to a scripted OpenAI-compatible server
(a TEST DOUBLE, tests/doubles/llm_servers.py): each role's prompt carries only its narrow
input, a usable reply is used, and any unusable one (a failed call, no JSON, a field that does
not exist, a value of the wrong type, a node with nothing left) falls back to the rules."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from agents.intake.agent import IntakeAgent
from agents.intake.info import InfoInput
from agents.intake.llm_roles import LLMRoles
from agents.intake.models import DecisionInput, NodeStatus
from agents.intake.run import run_intake_agent
from agents.llm.client import ChatClient
from agents.llm.config import LLMConfig
from agents.llm.providers import build_chat_model
from agents.ports.config import AgentConfig, LLMSettings
from controller.platform.artefacts import RunArtefacts
from controller.platform.memory_sql import SqliteMemoryStores
from tests.doubles.llm_servers import Fail, OpenAIServer, Reply
from tests.unit.agents.intake.helpers import DATA, ask, inp, schemas


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(models=("m",)) as running:
        yield running


def roles(server: OpenAIServer) -> LLMRoles:
    config = LLMConfig("openai", "m", server.base_url, timeout_seconds=5, max_retries=0, api_key=SecretStr("k" * 12))
    return LLMRoles(ChatClient(config, build_chat_model(config)))


def prompt(server: OpenAIServer) -> str:
    return [m["content"] for m in server.chat_requests[-1].body["messages"] if m["role"] == "user"][-1]


def update(node: str, field: str, value: object, **extra: object) -> dict[str, object]:
    return {"node_name": node, "field_name": field, "value": value, **extra}


class TestResolver:
    def test_a_usable_reply_is_used_with_the_same_conflict_rule(self, server):
        server.push(Reply(json.dumps({"updates": [update("Income", "annual_amount", 60000)],
                                      "priority_shift": None, "reasoning": "stated income"})))
        result = roles(server).resolve(inp("I get sixty grand", ask("Income", "annual_amount"),
                                           {"Income": {"annual_amount": 52000}}))
        (fact,) = result.updates
        assert fact.value == 60000 and fact.conflict and result.answered and fact.source == "user_input (llm)"
        assert "I get sixty grand" in prompt(server) and '"annual_amount"' in prompt(server)

    def test_a_fenced_reply_and_a_priority_shift(self, server):
        body = {"updates": [update("Income", "annual_amount", 0, is_correction=True)], "priority_shift": "job_loss"}
        server.push(Reply("Here you go:\n```json\n" + json.dumps(body) + "\n```"))
        result = roles(server).resolve(inp("they let me go", ask("Income", "annual_amount")))
        assert result.priority_shift == "job_loss" and result.updates[0].is_correction

    @pytest.mark.parametrize("reply", [
        Reply("I think the user is 34."),
        Reply(json.dumps({"updates": [update("Nowhere", "age", 34)]})),
        Reply(json.dumps({"updates": [update("Personal", "age", "thirty-four")]})),
        Reply("[" * 100 + "]" * 100),
        Fail(500),
    ], ids=["no json", "unknown node", "wrong type", "too deep", "call failed"])
    def test_an_unusable_reply_falls_back_to_the_rules(self, server, reply):
        server.push(reply)
        result = roles(server).resolve(inp("34"))
        assert result.updates[0].value == 34 and "rules: the model's reply was unusable" in result.reasoning


class TestInfo:
    def view(self, asked=()) -> InfoInput:  # noqa: ANN001
        return InfoInput("Income", schemas()["Income"], {}, frozenset(), (), frozenset(asked))

    def test_the_model_phrases_an_open_field(self, server):
        server.push(Reply(json.dumps({"complete": False, "field": "employment_status",
                                      "question": "What do you do for a living?"})))
        question = roles(server).ask(self.view())
        assert (question.field, question.text) == ("employment_status", "What do you do for a living?")
        assert "annual_amount, employment_status" in prompt(server)

    def test_a_question_is_one_printable_line(self, server):
        server.push(Reply(json.dumps({"complete": False, "field": "annual_amount",
                                      "question": "\u001b[2JPASSED\nHow much do you earn?"})))
        text = roles(server).ask(self.view()).text
        assert "\x1b" not in text and "\n" not in text and "How much do you earn?" in text

    def test_a_field_already_asked_three_times_is_never_asked_again(self, server):
        """Asked, rephrased, and with an example (issue 40): then never again."""
        server.push(Reply(json.dumps({"complete": False, "field": "annual_amount", "question": "Income?"})))
        question = roles(server).ask(self.view(["Income.annual_amount", "Income.annual_amount#again",
                                                "Income.annual_amount#example"]))
        assert question.field == "employment_status"

    def test_nothing_left_asks_no_model(self, server):
        view = InfoInput("Income", schemas()["Income"], {"annual_amount": 1, "employment_status": "employed"},
                         frozenset(), (), frozenset())
        assert roles(server).ask(view) is None and not server.chat_requests


class TestDecision:
    def view(self) -> DecisionInput:
        nodes = (NodeStatus("Personal", 2, (), 0, 0), NodeStatus("Income", 0, ("annual_amount",), 0, 1),
                 NodeStatus("Goals", 0, ("goal",), 0, 1))
        return DecisionInput("retire early", nodes, "Personal", (), {"Personal": {"age": 52}})

    def test_the_models_choice_with_its_reason(self, server):
        server.push(Reply(json.dumps({"next_node": "Goals", "reason": "the goal frames the rest"})))
        decision = roles(server).decide(self.view())
        assert (decision.next_node, decision.reason) == ("Goals", "the goal frames the rest")

    def test_a_node_with_nothing_left_is_refused(self, server):
        server.push(Reply(json.dumps({"next_node": "Personal", "reason": "again"})))
        decision = roles(server).decide(self.view())
        assert decision.next_node == "Income" and "the model chose 'Personal'" in decision.reason

    def test_its_prompt_holds_no_conversation(self, server):
        """The decision role's prompt is goal, statuses and data: no reply or question text."""
        server.push(Reply(json.dumps({"visited_all": True, "reason": "enough"})))
        assert roles(server).decide(self.view()).visited_all
        text = prompt(server)
        assert "retire early" in text and '"age": 52' in text
        assert "reply" not in text.lower() and "question" not in text.lower().replace("do not ask questions", "")


class TestWholeRun:
    def test_a_model_that_always_fails_still_completes_the_conversation(self, server, tmp_path):
        """Plan with an LLM provider (checked against the endpoint), then every call fails: each
        role falls back to the rules, the run passes, and the summary names the model."""
        settings = AgentConfig(data_dir=DATA, coder="openai", llm=LLMSettings(
            model="m", base_url=server.base_url, api_key=SecretStr("k" * 12), max_retries=0))
        plan = IntakeAgent().plan("intake-future", settings, None)
        assert plan.coder_name == "openai:m"
        summary = run_intake_agent(plan.inputs["target"], run_id="llm", artefacts=RunArtefacts(tmp_path / "run"),
                                   max_turns=plan.max_attempts, on_event=lambda _e: None, roles=plan.coder,
                                   memory=SqliteMemoryStores(tmp_path / "runs"))
        assert summary.status == "passed" and summary.coder == "openai:m"
        assert len(server.chat_requests) > 6  # the model was asked, for every role


class TestStructuredOutputAndTheGate:
    """Issue 40: every role call asks for its JSON Schema; the model's facts pass the rules' precision gate."""

    def test_the_request_carries_the_role_s_json_schema(self, server):
        server.push(Reply(json.dumps({"updates": [update("Personal", "age", 34)]})))
        roles(server).resolve(inp("34"))
        response_format = server.chat_requests[-1].body["response_format"]
        schema = response_format["json_schema"]["schema"]
        assert response_format["type"] == "json_schema" and "updates" in schema["properties"]
        assert "$ref" not in json.dumps(schema) and "$defs" not in schema  # inlined: every provider takes it

    def test_a_server_that_refuses_json_schema_gets_its_own_form(self, server):
        """llama-cpp-python's server refuses OpenAI's json_schema form (a 500 naming response_format,
        as its version 0.3.36 answered make llm-smoke): the call is sent again, once, as
        ``{"type": "json_object", "schema": ...}``, and the client keeps that form."""
        refusal = ("1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                   "'msg': \"Input should be 'text' or 'json_object'\"}")
        server.push(Fail(500, refusal))
        server.push(Reply(json.dumps({"updates": [update("Personal", "age", 34)]})))
        server.push(Reply(json.dumps({"updates": [update("Personal", "age", 35)]})))
        model = roles(server)
        assert [(u.field, u.value) for u in model.resolve(inp("34")).updates] == [("age", 34)]
        assert [(u.field, u.value) for u in model.resolve(inp("35")).updates] == [("age", 35)]
        forms = [r.body["response_format"]["type"] for r in server.chat_requests]
        assert forms == ["json_schema", "json_object", "json_object"]
        assert "updates" in server.chat_requests[-1].body["response_format"]["schema"]["properties"]

    def test_a_fact_no_word_of_the_reply_names_is_asked_not_stored(self, server):
        server.push(Reply(json.dumps({"updates": [update("Personal", "age", 34),
                                                  update("Income", "annual_amount", 34000)]})))
        result = roles(server).resolve(inp("34"))
        assert [(u.field, u.value) for u in result.updates] == [("age", 34)]
        assert [(p.field, p.value) for p in result.unsure] == [("annual_amount", 34000)]
