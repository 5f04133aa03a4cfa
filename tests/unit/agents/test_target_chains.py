"""Targets that follow one another: a target's predecessors, a folder's chains, and each mistake as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.ports.errors import ConfigError
from agents.target_chains import Chain, chains, predecessors
from controller.platform.settings import PROJECT_ROOT


def intake(data: Path, name: str, extra: str = "", agent: str = "intake") -> None:
    """An intake target's folder with a target.toml (``extra``: its subject, follows, ...)."""
    (data / name).mkdir(parents=True)
    goal = 'goal = "Build an emergency fund"\n' if agent == "intake" else ""
    (data / name / "target.toml").write_text(f'agent = "{agent}"\n{goal}{extra}', encoding="utf-8")


def refused(call, *fragments: str) -> None:
    with pytest.raises(ConfigError) as caught:
        call()
    line = caught.value.one_line()
    assert caught.value.exit_code == 2 and "\n" not in line
    for fragment in fragments:
        assert fragment in line, line


class TestPredecessors:
    def test_the_shipped_pair(self):
        """data/intake-day2 follows data/intake-day1, which follows nothing; both talk to Maria Silva."""
        assert predecessors(PROJECT_ROOT / "data", "intake-day2") == ["intake-day1"]
        assert predecessors(PROJECT_ROOT / "data", "intake-day1") == []

    def test_nearest_first(self, tmp_path):
        """Day 3 follows Day 2, which follows Day 1: both, the one it follows first."""
        intake(tmp_path, "d1")
        intake(tmp_path, "d2", 'follows = "d1"\n')
        intake(tmp_path, "d3", 'follows = "d2"\n')
        assert predecessors(tmp_path, "d3") == ["d2", "d1"]

    def test_an_unknown_target(self, tmp_path):
        """A followed target with no folder: the file, the key and the name, and the known targets."""
        intake(tmp_path, "d2", 'follows = "d1"\n')
        refused(lambda: predecessors(tmp_path, "d2"), "d2/target.toml: follows: unknown target 'd1'",
                "known targets: d2")

    def test_a_cycle(self, tmp_path):
        """a follows b follows a: the cycle, named."""
        intake(tmp_path, "a", 'follows = "b"\n')
        intake(tmp_path, "b", 'follows = "a"\n')
        refused(lambda: predecessors(tmp_path, "a"), "follows: a cycle: a → b → a")

    def test_following_itself(self, tmp_path):
        """A target that follows itself is a cycle of one."""
        intake(tmp_path, "a", 'follows = "a"\n')
        refused(lambda: predecessors(tmp_path, "a"), "a cycle: a → a")

    def test_only_a_conversation_is_followed(self, tmp_path):
        """Following a bank-statement target (no target.toml) or a blueprint: refused."""
        (tmp_path / "bank").mkdir()
        intake(tmp_path, "d2", 'follows = "bank"\n')
        refused(lambda: predecessors(tmp_path, "d2"), "follows: bank is not a target of the intake agent")

    def test_one_subject_per_chain(self, tmp_path):
        """Day 1 with Maria and Day 2 with John: refused; the same person spelt otherwise is one subject."""
        intake(tmp_path, "d1", 'subject = "Maria Silva"\n')
        intake(tmp_path, "d2", 'subject = "maria  SILVA"\nfollows = "d1"\n')
        intake(tmp_path, "d3", 'subject = "John"\nfollows = "d2"\n')
        assert predecessors(tmp_path, "d2") == ["d1"]
        refused(lambda: predecessors(tmp_path, "d3"), "d3 talks to 'John' but d2", "a chain talks to one person")


class TestChains:
    def test_every_target_in_one_chain_in_order(self, tmp_path):
        """Followers run after what they follow; the rest are chains of one; a subject marks a conversation."""
        intake(tmp_path, "z-day1", 'subject = "Maria Silva"\n')
        intake(tmp_path, "a-day2", 'follows = "z-day1"\n')
        intake(tmp_path, "m-alone")
        (tmp_path / "bank").mkdir()
        assert chains(tmp_path, ["a-day2", "bank", "m-alone", "z-day1"]) == [
            Chain(("bank",)), Chain(("m-alone",)), Chain(("z-day1", "a-day2"), "Maria Silva", True)]

    def test_a_pair_without_a_subject_is_still_a_conversation(self, tmp_path):
        """The batch needs a subject for it even when no target names one."""
        intake(tmp_path, "d1")
        intake(tmp_path, "d2", 'follows = "d1"\n')
        assert chains(tmp_path, ["d1", "d2"]) == [Chain(("d1", "d2"), None, True)]

    def test_two_followers_of_one_target(self, tmp_path):
        """A tree is not a chain: one line naming both followers."""
        intake(tmp_path, "d1")
        intake(tmp_path, "d2a", 'follows = "d1"\n')
        intake(tmp_path, "d2b", 'follows = "d1"\n')
        refused(lambda: chains(tmp_path, ["d1", "d2a", "d2b"]), "d2a and d2b both follow d1")

    def test_a_cycle_anywhere_in_the_folder(self, tmp_path):
        """A cycle among targets nothing else follows is still refused (it has no first target to run)."""
        intake(tmp_path, "alone")
        intake(tmp_path, "a", 'follows = "b"\n')
        intake(tmp_path, "b", 'follows = "a"\n')
        refused(lambda: chains(tmp_path, ["a", "alone", "b"]), "a cycle")

    def test_a_broken_target_is_left_to_its_run(self, tmp_path):
        """A target.toml that does not load is a chain of its own: its run says what is wrong."""
        intake(tmp_path, "broken", "colour = 1\n")
        assert chains(tmp_path, ["broken"]) == [Chain(("broken",))]
