"""Whole conversations through the graph, in-process (the intake agent runs nothing in a
sandbox): the examples of data/ pass, no question is asked twice, an unparsed reply is
survived, a run interrupted mid-conversation resumes from its checkpoint without applying a
turn twice, and `check --conversation` judges other scripts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agents.intake.agent import IntakeAgent
from agents.intake.checking import check_conversations
from agents.intake.run import run_intake_agent
from agents.intake.target import IntakeTarget
from agents.ports.config import AgentConfig
from controller.platform.artefacts import RunArtefacts
from controller.platform.checkpoints import close_checkpoint, open_checkpoint
from controller.platform.memory_sql import SqliteMemoryStores
from controller.runner.agent_runner import resume_line
from tests.unit.agents.intake.helpers import DATA, EXAMPLES, example


def run(tmp_path: Path, target: IntakeTarget, on_event=None, checkpoint=None):  # noqa: ANN001, ANN201
    events = []

    def record(event):  # noqa: ANN001, ANN202
        events.append(event)
        if on_event:
            on_event(event)

    summary = run_intake_agent(target, run_id="unit", artefacts=RunArtefacts(tmp_path / "run"),
                               max_turns=len(target.replies), on_event=record, checkpoint=checkpoint,
                               memory=SqliteMemoryStores(tmp_path / "runs"))
    graph = json.loads((tmp_path / "run" / "graph.json").read_text())
    return summary, events, graph


class TestExamples:
    @pytest.mark.parametrize("name", EXAMPLES)
    def test_each_example_passes(self, tmp_path, name):
        summary, _, _ = run(tmp_path, example(name))
        assert summary.status == "passed", summary.problems
        assert summary.attempts == len(example(name).replies)

    @pytest.mark.parametrize("name", EXAMPLES)
    def test_no_question_is_asked_twice(self, tmp_path, name):
        _, events, _ = run(tmp_path, example(name))
        asked = [e.detail for e in events if e.node == "ask" and e.outcome != "complete"]
        assert asked and len(asked) == len(set(asked))

    def test_cross_node_fact_and_rephrase(self, tmp_path):
        _, events, graph = run(tmp_path, example("intake-cross-node"))
        first = graph["history"]["Income.annual_amount"][0]
        assert first["turn"] == 1 and first["value"] == 80000  # said while the age was asked
        assert [e.outcome for e in events if e.node == "ask"][:2] == ["field", "rephrase"]

    def test_the_contradiction_keeps_its_history(self, tmp_path):
        _, _, graph = run(tmp_path, example("intake-contradiction"))
        assert [h["value"] for h in graph["history"]["Income.annual_amount"]] == [52000, 58000]
        assert [h["value"] for h in graph["history"]["Personal.age"]] == [41, 42]
        assert [(c["field"], c["resolved"]) for c in graph["conflicts"]] == [("annual_amount", True), ("age", True)]
        assert graph["traversal"] == ["Personal", "Income", "Expenses", "Personal"]

    def test_the_future_does_not_overwrite_the_present(self, tmp_path):
        _, _, graph = run(tmp_path, example("intake-future"))
        assert graph["nodes"]["Income"]["annual_amount"] == 65000
        future = [h for h in graph["history"]["Income.annual_amount"] if h["temporal"] == "future"]
        assert [(h["value"], h["applied"]) for h in future] == [(75000, False)]

    def test_the_priority_shift_reorders_the_traversal(self, tmp_path):
        """Ranked order is Personal, Goals, Income, Savings, Expenses; the job loss sends the loop to
        the nodes that declare it (Savings, Expenses) at once, the best ranked first."""
        summary, _, graph = run(tmp_path, example("intake-priority-shift"))
        assert graph["traversal"] == ["Personal", "Goals", "Income", "Savings", "Expenses"]
        assert graph["edges"][2]["reason"].startswith("priority shift (job_loss)")
        assert graph["nodes"]["Income"] == {"annual_amount": 0, "employment_status": "unemployed"}
        assert [h["value"] for h in graph["history"]["Income.annual_amount"]] == [90000, 0]
        assert graph["skipped"] == ["Expenses.rent"] and summary.status == "passed"


class TestFailures:
    def test_an_unparsed_reply_is_survived(self, tmp_path):
        target = example("intake-future")
        target = replace(target, replies=("hmm, let me think", *target.replies))
        summary, events, _ = run(tmp_path, target)
        assert [e.outcome for e in events if e.node == "resolve"][0] == "unparsed"
        assert summary.unparsed == 1

    def test_a_script_that_ends_early_fails_with_the_gaps(self, tmp_path):
        target = replace(example("intake-priority-shift"), replies=("52", "I live in Dublin"), expected=None)
        summary, _, _ = run(tmp_path, target)
        assert summary.status == "failed" and "out_of_replies" in summary.failures
        assert any("Income.annual_amount neither answered nor skipped" in p for p in summary.problems)

    def test_expected_json_decides(self, tmp_path):
        target = example("intake-future")
        wrong = {**target.expected, "Income": {"annual_amount": 75000}}
        summary, _, _ = run(tmp_path, replace(target, expected=wrong))
        assert summary.status == "failed" and summary.problems == ["Income.annual_amount: expected 75000, got 65000"]

    def test_an_unconfirmed_conflict_fails(self, tmp_path):
        target = example("intake-contradiction")
        summary, _, _ = run(tmp_path, replace(target, replies=target.replies[:-1]))
        assert summary.status == "failed" and "unresolved conflict on Personal.age" in summary.problems


class Interrupt(BaseException):
    """Stands for Ctrl-C / a killed process at a chosen point (a test double of the interruption)."""


class TestResume:
    def test_a_run_interrupted_mid_conversation_resumes(self, tmp_path):
        """Stopped right after turn 4's reply was resolved; resumed from the checkpoint: the
        finished turns are skipped, no turn is applied twice, and the run ends as an
        uninterrupted one does."""
        target = example("intake-priority-shift")
        agent, run_dir = IntakeAgent(), tmp_path / "run"

        def stop(event):  # noqa: ANN001, ANN202
            if event.node == "resolve" and event.attempt == 4:
                raise Interrupt

        checkpoint = open_checkpoint(run_dir, "unit", agent.info.state_types, resume=False)
        with pytest.raises(Interrupt):
            run(tmp_path, target, stop, checkpoint)
        close_checkpoint(checkpoint)
        assert not (run_dir / "summary.json").exists()

        checkpoint = open_checkpoint(run_dir, "unit", agent.info.state_types, resume=True)
        plan = agent.plan("intake-priority-shift", AgentConfig(data_dir=DATA), None)
        line = resume_line(agent, plan, checkpoint)
        assert "listen [4]" in line and "resolve [3]" in line
        summary, events, graph = run(tmp_path, target, None, checkpoint)
        close_checkpoint(checkpoint)

        assert summary.status == "passed" and summary.attempts == 10
        assert not [e for e in events if e.node == "listen" and e.attempt <= 4]
        assert [h["value"] for h in graph["history"]["Income.annual_amount"]] == [90000, 0]
        assert [t["turn"] for t in graph["history"]["Savings.emergency_fund"]] == [7]
        assert graph["traversal"] == ["Personal", "Goals", "Income", "Savings", "Expenses"]


class TestCheck:
    def test_other_conversations_are_judged(self, tmp_path):
        good = tmp_path / "good.txt"
        good.write_text((DATA / "intake-future" / "replies.txt").read_text())
        bad = tmp_path / "bad.txt"
        bad.write_text("29\nI live in Austin\nI want to retire early\nby 2045\nI earn 70k\nemployed\n")
        lines: list[str] = []
        status = check_conversations(example("intake-future"), [str(tmp_path)], lines.append,
                                     SqliteMemoryStores(tmp_path / "runs"))
        assert status == 1 and lines[-1] == "1 passed, 1 failed"
        assert any(line.endswith("good.txt: passed") for line in lines)
        assert any("bad.txt: failed: Income.annual_amount: expected 65000, got 70000" in line for line in lines)
