"""The info role (one question at a time, never repeated, skip allowed, conflicts first)
and the decision role (next node with a reason, priority shifts, done; isolated from the
conversation)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from agents.intake.decision import decide
from agents.intake.info import InfoInput, next_question
from agents.intake.memory import GraphMemory
from agents.intake.models import DecisionInput, FactUpdate, NodeStatus, Question, Resolution
from agents.intake.nodes import decide as decide_node
from agents.intake.roles import OfflineRoles
from controller.platform.memory_sql import SqliteMemoryStores
from tests.unit.agents.intake.helpers import example, schemas


def info(values=None, skipped=(), conflicts=(), asked=()):  # noqa: ANN001, ANN201
    return InfoInput("Income", schemas()["Income"], values or {}, frozenset(skipped), tuple(conflicts),
                     frozenset(asked))


class TestInfoRole:
    def test_one_question_at_a_time_in_schema_order(self):
        question = next_question(info())
        assert (question.field, question.kind) == ("annual_amount", "field")
        assert question.text == "How much do you earn a year, before tax?"

    def test_an_unanswered_question_is_rephrased_then_given_an_example_then_left(self):
        """Never the same question twice: asked → rephrased (saying skip is fine) → with an example of
        the expected form (issue 40: never give up silently) → next field."""
        first = next_question(info())
        again = next_question(info(asked=[first.key]))
        assert again.field == first.field and again.kind == "rephrase" and again.text != first.text
        assert "skip" in again.text
        last = next_question(info(asked=[first.key, again.key]))
        assert last.field == first.field and last.kind == "example" and "For example: 2,500" in last.text
        after = next_question(info(asked=[first.key, again.key, last.key]))
        assert after.field == "employment_status"

    def test_filled_and_skipped_fields_are_not_asked(self):
        assert next_question(info({"annual_amount": 1}, skipped=["employment_status"])) is None

    def test_an_open_conflict_is_confirmed_first(self):
        conflict = {"id": 7, "node": "Income", "field": "annual_amount", "old": 52000, "new": 60000}
        question = next_question(info({"annual_amount": 60000}, conflicts=[conflict]))
        assert question.kind == "confirm" and question.conflict == 7 and question.old == 52000
        assert "52000" in question.text and "60000" in question.text
        assert next_question(info({"annual_amount": 60000}, conflicts=[conflict], asked=["conflict:7"])).kind == "field"


def status(name, pending=1, priority=(), conflicts=0, missing=("x",)):  # noqa: ANN001, ANN201
    return NodeStatus(name, 0, tuple(missing) if pending else (), conflicts, pending, tuple(priority))


class TestDecisionRole:
    def test_the_next_unfinished_node_in_order_with_a_reason(self):
        decision = decide(DecisionInput("goal", (status("A", 0), status("B"), status("C")), "A"))
        assert decision.next_node == "B" and decision.reason.startswith("B next")
        assert "still needs x" in decision.reason and not decision.visited_all

    def test_done_when_nothing_is_left(self):
        decision = decide(DecisionInput("goal", (status("A", 0), status("B", 0)), "B"))
        assert decision.visited_all and decision.next_node is None and "every node collected" in decision.reason

    def test_a_priority_shift_jumps_to_the_urgent_node(self):
        nodes = (status("Goals"), status("Expenses", priority=("job_loss",)), status("Savings", priority=("job_loss",)))
        decision = decide(DecisionInput("goal", nodes, "Income", ("job_loss",)))
        assert decision.next_node == "Expenses" and decision.reason.startswith("priority shift (job_loss)")

    def test_a_finished_urgent_node_no_longer_jumps(self):
        nodes = (status("Goals"), status("Savings", 0, priority=("job_loss",)))
        assert decide(DecisionInput("goal", nodes, "Savings", ("job_loss",))).next_node == "Goals"

    def test_a_node_with_a_conflict_is_unfinished(self):
        nodes = (status("Personal", 1, conflicts=1, missing=()), status("B", 0))
        decision = decide(DecisionInput("goal", nodes, "B"))
        assert decision.next_node == "Personal" and "conflict" in decision.reason

    def test_its_input_holds_no_conversation(self):
        """The seed's isolation: goal, node statuses and data, previous node, events; no reply, no question."""
        fields = {f.name for f in dataclasses.fields(DecisionInput)} | {f.name for f in dataclasses.fields(NodeStatus)}
        assert not fields & {"reply", "replies", "question", "questions", "conversation", "transcript", "asked"}

    def test_the_decide_node_ignores_the_reply(self, tmp_path):
        """Two states differing only in the raw reply and question give the same decision."""

        def decided(folder: str, reply: str, question: str) -> dict:
            memory = GraphMemory(SqliteMemoryStores(tmp_path / folder).for_run("t"), None, "t")
            personal = (FactUpdate("Personal", "age", 52), FactUpdate("Personal", "city", "Dublin"))
            memory.apply_updates(1, Question("Personal", "age", "?"), "52 in Dublin", Resolution(personal))
            context = SimpleNamespace(target=example(), memory=memory, artefacts=None, max_turns=10, run_id="t",
                                      roles=OfflineRoles())
            state = {"node": "Personal", "step": 0, "asked": [], "priority": [], "reply": reply,
                     "question": {"text": question}}
            try:
                return decide_node(state, SimpleNamespace(context=context))
            finally:
                memory.close()

        one, two = decided("a", "I lost my job", "a?"), decided("b", "I earn 1,000,000", "b?")
        assert one["node"] == two["node"] == "Goals"
        assert one["events"][0].detail == two["events"][0].detail
