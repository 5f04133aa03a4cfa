"""The graph memory: apply_updates never loses a value, conflicts open and close, past and
future statements are history only, each turn is applied once (what resume relies on); the
facts go through the memory port (the controller's SQLite store), the conversation beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.intake.memory import GraphMemory
from agents.intake.models import FactUpdate, Question, Resolution
from controller.platform.memory_sql import SqliteMemoryStores

QUESTION = Question("Income", "annual_amount", "How much?")


def open_memory(runs_dir: Path) -> GraphMemory:
    stores = SqliteMemoryStores(runs_dir)
    return GraphMemory(stores.for_run("unit"), stores.conversation("unit"), "unit")


@pytest.fixture
def memory(tmp_path):  # noqa: ANN001, ANN201
    memory = open_memory(tmp_path)
    yield memory
    memory.close()


def apply(memory: GraphMemory, turn: int, *updates: FactUpdate, keep: int | None = None) -> bool:
    return memory.apply_updates(turn, QUESTION, f"reply {turn}", Resolution(tuple(updates), keep_conflict=keep))


def income(value: object, **kw: object) -> FactUpdate:
    return FactUpdate("Income", "annual_amount", value, **kw)  # type: ignore[arg-type]


class TestHistory:
    def test_a_correction_keeps_the_old_value_in_the_history(self, memory):
        apply(memory, 1, income(52000))
        apply(memory, 2, income(58000, is_correction=True))
        history = memory.get_field_history("Income", "annual_amount")
        assert [(h["value"], h["previous"]) for h in history] == [(52000, None), (58000, 52000)]
        assert history[1]["correction"] and history[0]["at"] <= history[1]["at"]
        assert memory.get_all_nodes_data()["Income"]["annual_amount"] == 58000
        (conflict,) = memory.conflicts()
        assert conflict["resolved"] and conflict["resolution"] == "explicit correction"

    def test_a_life_event_is_recorded_as_such(self, memory):
        apply(memory, 1, income(80000))
        apply(memory, 2, income(0, is_correction=True, source="life_event", reasoning="life event job_loss"))
        (conflict,) = memory.conflicts()
        assert conflict["resolution"] == "life event" and (conflict["old"], conflict["new"]) == (80000, 0)

    @pytest.mark.parametrize("when", ["future", "past"])
    def test_future_and_past_never_overwrite_the_present(self, memory, when):
        apply(memory, 1, income(65000))
        apply(memory, 2, income(75000, temporal=when))
        assert memory.get_all_nodes_data()["Income"]["annual_amount"] == 65000
        last = memory.get_field_history("Income", "annual_amount")[-1]
        assert (last["value"], last["temporal"], last["applied"]) == (75000, when, False)

    def test_a_future_statement_alone_is_in_the_export(self, memory):
        apply(memory, 1, income(75000, temporal="future"))
        exported = memory.export()
        assert "Income" not in exported["nodes"] and exported["history"]["Income.annual_amount"][0]["value"] == 75000

    def test_a_skip_is_kept_as_a_skip(self, memory):
        apply(memory, 1, income(None, skipped=True, source="user_skip"))
        assert memory.skipped() == {("Income", "annual_amount")}
        assert memory.get_field_history("Income", "annual_amount")[0]["source"] == "user_skip"


class TestConflicts:
    def test_a_contradiction_opens_a_conflict_and_the_newer_value_stands(self, memory):
        apply(memory, 1, income(52000))
        apply(memory, 2, income(60000, conflict=True))
        assert memory.has_conflicts("Income")
        assert memory.get_all_nodes_data()["Income"]["annual_amount"] == 60000
        assert [h["value"] for h in memory.get_field_history("Income", "annual_amount")] == [52000, 60000]

    def test_confirming_closes_it(self, memory):
        apply(memory, 1, income(52000))
        apply(memory, 2, income(60000, conflict=True))
        (conflict,) = memory.conflicts(open_only=True)
        apply(memory, 3, keep=conflict["id"])
        assert not memory.has_conflicts("Income") and memory.get_all_nodes_data()["Income"]["annual_amount"] == 60000

    def test_a_correction_closes_it(self, memory):
        apply(memory, 1, income(52000))
        apply(memory, 2, income(60000, conflict=True))
        apply(memory, 3, income(52000, is_correction=True))
        assert not memory.has_conflicts("Income")
        assert [h["value"] for h in memory.get_field_history("Income", "annual_amount")] == [52000, 60000, 52000]


class TestIdempotence:
    def test_a_turn_is_applied_once(self, memory):
        """A node re-run on resume finds its turn and applies nothing twice."""
        assert apply(memory, 1, income(52000))
        assert not apply(memory, 1, income(52000))
        assert len(memory.get_field_history("Income", "annual_amount")) == 1
        assert memory.turn_result(1).updates[0].value == 52000

    def test_edges_and_visits_are_once_per_step(self, memory):
        memory.visit(0, "Personal")
        memory.add_edge(1, "Personal", "Income", "needs income")
        memory.add_edge(1, "Personal", "Income", "needs income")
        assert memory.traversal() == ["Personal", "Income"] and len(memory.edges()) == 1
        assert memory.edges()[0]["reason"] == "needs income" and memory.get_last_node() == "Income"

    def test_the_memory_persists_across_processes(self, tmp_path):
        first = open_memory(tmp_path)
        apply(first, 1, income(52000))
        first.close()
        again = open_memory(tmp_path)
        assert again.get_all_nodes_data() == {"Income": {"annual_amount": 52000}}
        assert again.turn_result(1) is not None and again.transcript()[0]["reply"] == "reply 1"
        again.close()
        assert (tmp_path / "unit" / "conversation.sqlite").is_file()


def test_a_node_with_its_history(memory):
    """The seed's get_node_with_history: values, every field's history (future ones too), conflicts."""
    apply(memory, 1, income(52000))
    apply(memory, 2, income(60000, conflict=True), FactUpdate("Income", "employment_status", "employed",
                                                              temporal="future"))
    view = memory.get_node_with_history("Income")
    assert view["data"] == {"annual_amount": 60000}
    assert [h["value"] for h in view["history"]["annual_amount"]] == [52000, 60000]
    assert view["history"]["employment_status"][0]["temporal"] == "future"
    assert [c["new"] for c in view["conflicts"]] == [60000]
