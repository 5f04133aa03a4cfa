"""Issue 33's findings on the intake agent, one test each: every one of these failed on the code
the issue was filed against (run against that tree's sources, see the report) and passes now.

Replies misread (a name lost an age, an answer about last year refused, one number filling two
fields, a maximum not enforced, free text cut at "and"); memory that did not persist across
conversations; nodes copied into every target and listed by hand; a decision role that took the
first node in the file's order; an info role without the conversation; a memory readable only by
opening files; wording that spoke of parsers (``--target``'s help, summary.json's parser_path) and
an interactive run that printed each question twice.
"""

from __future__ import annotations

import datetime
import io
import json
import shutil
from pathlib import Path

import pytest

from agents.intake.agent import IntakeAgent
from agents.intake.catalogue import SHIPPED, shipped
from agents.intake.info import InfoInput, next_question
from agents.intake.models import Question
from agents.intake.resolver import ResolverInput, resolve
from agents.ports.config import AgentConfig
from agents.registry import get_agent
from controller.entry.cli import build_parser, main
from controller.platform.progress import Progress
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.runner.agent_runner import Runner

DATA = PROJECT_ROOT / "data"
TODAY = datetime.date(2026, 6, 15)
SEED_NODES = {"Personal", "UserProfile", "Family", "Marriage", "Parents", "Financial", "Income", "Expenses",
              "Savings", "Assets", "Liabilities", "Loan", "Goals", "Insurance", "Investments", "Retirement"}


def facts(reply: str, node: str, field: str, nodes: tuple[str, ...] = ("Personal", "Income", "Goals"),
          extra: dict | None = None) -> dict[tuple[str, str], object]:
    schemas = {name: shipped()[name] for name in nodes} | (extra or {})
    question = Question(node, field, schemas[node].question(field))
    result = resolve(ResolverInput(reply, question, schemas, {}, TODAY))
    return {(u.node, u.field): u.value for u in result.updates if u.current}


def business() -> dict:
    target = IntakeAgent().plan("intake-business", AgentConfig(data_dir=DATA), None).inputs["target"]
    return {"Business": target.schemas["Business"]}


class TestRepliesReadRight:
    def test_a_name_does_not_lose_the_age(self):
        """'My name is Maria Silva and I'm 41' gives the name and the age (the age was lost)."""
        found = facts("My name is Maria Silva and I'm 41", "Personal", "city")
        assert found[("Personal", "name")] == "Maria Silva" and found[("Personal", "age")] == 41

    def test_an_answer_about_last_year_to_a_question_about_last_year_is_the_answer(self):
        """It was taken as a past fact, not stored, and the user told 'Sorry, I did not get that'."""
        found = facts("Revenue was 800,000 last year", "Business", "revenue_last_year", ("Personal",), business())
        assert found[("Business", "revenue_last_year")] == 800000

    def test_one_token_fills_at_most_one_field(self):
        """'Founded in March 2015' to 'How old are you?' set age = 2015; the date keeps its digits."""
        found = facts("Founded in March 2015", "Personal", "age", ("Personal",), business())
        assert ("Personal", "age") not in found and found[("Business", "founded")] == "2015-03"

    def test_a_maximum_is_enforced_and_said(self):
        """A schema's maximum of 120 was parsed but never enforced: 150 is refused and the question
        asked again says why."""
        schemas = {"Personal": shipped()["Personal"]}
        result = resolve(ResolverInput("I'm 150", Question("Personal", "age", "How old are you?"), schemas, {}, TODAY))
        assert not result.updates and result.rejected[0].reason == "150 is more than 120, the most for age"
        turn = {"question": {}, "reply": "I'm 150", "rejected": [{"node": "Personal", "field": "age",
                                                                  "reason": result.rejected[0].reason}]}
        again = next_question(InfoInput("Personal", schemas["Personal"], {}, frozenset(), (),
                                        frozenset({"Personal.age"}), conversation=(turn,)))
        assert again.kind == "rephrase" and again.text.startswith("Sorry, 150 is more than 120")

    def test_free_text_is_not_cut_at_and(self):
        """'I want to find a new job and keep the house' was stored as 'find a new job'."""
        found = facts("I want to find a new job and keep the house", "Goals", "goal")
        assert found[("Goals", "goal")] == "find a new job and keep the house"


class TestWhatTheSeedAsks:
    def test_the_seeds_16_nodes_ship_once_and_are_discovered(self):
        """Five nodes existed, copied into every target; now the 16 are files in one folder."""
        assert set(shipped()) == SEED_NODES and {p.stem for p in SHIPPED.glob("*.json")} == SEED_NODES
        assert not list(DATA.glob("intake-*/nodes/Personal.*")) and not list(DATA.glob("intake-*/nodes/Income.*"))

    def test_a_goal_chooses_the_nodes_when_a_target_names_none(self, tmp_path):
        """Without nodes = [...], the goal picks them (each had to be listed by hand)."""
        folder = tmp_path / "t"
        folder.mkdir()
        (folder / "target.toml").write_text('agent = "intake"\ngoal = "Plan my retirement"\n')
        (folder / "replies.txt").write_text("41\n")
        nodes = IntakeAgent().plan("t", AgentConfig(data_dir=tmp_path), None).inputs["target"].nodes
        assert nodes[:2] == ("Personal", "Goals") and "Retirement" in nodes and "Loan" not in nodes

    def test_the_decision_role_reasons_about_the_goal(self, tmp_path):
        """It took the first unfinished node of target.toml's order; now the goal and priorities
        order them and the reason says so."""
        folder = tmp_path / "t"
        folder.mkdir()
        (folder / "target.toml").write_text('agent = "intake"\ngoal = "Plan my retirement"\n'
                                            'nodes = ["Expenses", "Retirement", "Personal"]\n')
        (folder / "replies.txt").write_text("41\nLeeds\n")
        settings = Settings(_env_file=None, data_dir=tmp_path, runs_dir=tmp_path / "runs")
        Runner(settings, Progress(stream=io.StringIO())).run(get_agent("intake"), "t", None)
        (run_dir,) = (tmp_path / "runs").glob("*-t-*")
        graph = json.loads((run_dir / "graph.json").read_text())
        assert graph["traversal"][:2] == ["Personal", "Retirement"]
        assert "the goal (Plan my retirement) speaks of 'retire'" in graph["edges"][0]["reason"]

    def test_the_info_role_is_given_the_conversation(self):
        """It saw only the keys already asked."""
        assert "conversation" in InfoInput.__dataclass_fields__


class TestMemoryAcrossConversations:
    def test_day_one_and_day_two(self, tmp_path, capsys, monkeypatch):
        """Seed 002's Day 1/Day 2: the second conversation starts from the first's facts (each run
        started with an empty graph), never asks for them, and records the change in the history."""
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path))
        assert main(["run", "--target", "intake-day1", "--subject", "Maria Silva"]) == 0
        assert main(["run", "--target", "intake-day2", "--subject", "maria silva"]) == 0
        assert main(["memory", "--subject", "Maria Silva"]) == 0
        printed = capsys.readouterr().out
        assert "How old are you?" not in printed.split("intake-day2")[-1]
        assert "0 (was 80000)  life_event" in printed and "2 conversation(s)" in printed
        assert "of intake-day1, intake-day2" in printed

    def test_memory_prints_a_runs_graph(self, tmp_path, capsys, monkeypatch):
        """Reading the graph memory took opening graph.json or the SQLite file by hand."""
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path))
        assert main(["run", "--target", "intake-contradiction"]) == 0
        (run_dir,) = tmp_path.glob("*-intake-contradiction-*")
        capsys.readouterr()
        assert main(["memory", run_dir.name]) == 0
        printed = capsys.readouterr().out
        assert "age = 42" in printed and "Personal.age: 41 vs 42" in printed and "conflicts: 2 (0 open)" in printed


class TestWording:
    def test_run_help_describes_any_target(self):
        """--target's help said 'the statement PDF and result.csv' for every agent."""
        run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
        target = next(a for a in run._actions if "--target" in a.option_strings)
        assert "statement PDF and result.csv" not in target.help and "conversation" in target.help

    def test_an_intake_summary_names_its_graph(self, tmp_path, monkeypatch):
        """summary.json called graph.json parser_path."""
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path))
        assert main(["run", "--target", "intake-future"]) == 0
        (summary,) = tmp_path.glob("*-intake-future-*/summary.json")
        document = json.loads(summary.read_text())
        assert "parser_path" not in document and document["graph_path"].endswith("graph.json")

    def test_interactive_prints_each_question_once(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
        """--interactive printed each question twice (the progress line and the prompt)."""
        data = tmp_path / "data"
        shutil.copytree(DATA / "intake-future", data / "t")
        monkeypatch.setattr("sys.stdin", io.StringIO("41\nLeeds\n"))
        settings = Settings(_env_file=None, data_dir=data, runs_dir=tmp_path / "runs", interactive=True)
        Runner(settings, Progress()).run(get_agent("intake"), "t", None)
        out = capsys.readouterr().out
        assert out.count("How old are you?") == 1 and out.count("Which city do you live in?") == 1
