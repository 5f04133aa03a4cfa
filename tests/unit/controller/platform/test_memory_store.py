"""The memory port's SQLite store: a write applies whole and once per turn, the history keeps
every value with the one it replaced, conflicts open and close, a subject is filed under a
hash of its name (never the name), and a name outside the safe pattern is refused."""

from __future__ import annotations

import pytest

from agents.ports.errors import ConfigError
from agents.ports.memory import (ConflictWrite, FieldWrite, MemoryStores, MemoryWrite, check_subject,
                                 subject_key)
from controller.platform.memory_store import SqliteMemoryStores


def write(turn: int, *fields: FieldWrite, run_id: str = "r1", at: str = "2026-01-01T00:00:00+00:00",
          **more: object) -> MemoryWrite:
    return MemoryWrite(run_id, turn, at, fields, **more)  # type: ignore[arg-type]


class TestCommit:
    def test_a_value_and_the_one_it_replaced(self, tmp_path):
        """The history keeps each value with the previous one; the field holds the last applied."""
        store = SqliteMemoryStores(tmp_path).for_run("r1")
        store.commit(write(1, FieldWrite("Income", "annual_amount", 80000)))
        store.commit(write(2, FieldWrite("Income", "annual_amount", 0, source="life_event", correction=True)))
        field = store.view().node("Income").field("annual_amount")
        assert field.value == 0
        assert [(h.value, h.previous, h.turn) for h in field.history] == [(80000, None, 1), (0, 80000, 2)]

    def test_a_turn_applies_once(self, tmp_path):
        """A second commit of the same (run, turn) changes nothing (a resumed run)."""
        store = SqliteMemoryStores(tmp_path).for_run("r1")
        assert store.commit(write(1, FieldWrite("Personal", "age", 41)))
        assert not store.commit(write(1, FieldWrite("Personal", "age", 99)))
        assert store.view().values() == {"Personal": {"age": 41}}

    def test_past_and_future_are_history_only(self, tmp_path):
        """An entry that is not applied leaves the current value alone."""
        store = SqliteMemoryStores(tmp_path).for_run("r1")
        store.commit(write(1, FieldWrite("Income", "annual_amount", 65000),
                           FieldWrite("Income", "annual_amount", 75000, temporal="future", applied=False)))
        field = store.view().node("Income").field("annual_amount")
        assert field.value == 65000 and [h.applied for h in field.history] == [True, False]

    def test_conflicts_open_and_close(self, tmp_path):
        """A conflict stays open until a write resolves it (by id, or every one of its field)."""
        store = SqliteMemoryStores(tmp_path).for_run("r1")
        store.commit(write(1, conflicts=(ConflictWrite("Personal", "age", 41, 42),
                                         ConflictWrite("Income", "annual_amount", 1, 2))))
        first, second = store.view().conflicts
        store.commit(write(2, close=((first.id, "confirmed"),)))
        store.commit(write(3, close_fields=(("Income", "annual_amount", "corrected"),)))
        view = store.view()
        assert view.open_conflicts() == () and view.conflicts[0].resolution.startswith("confirmed")

    def test_the_runs_that_wrote(self, tmp_path):
        """A subject's memory lists its conversations, oldest first."""
        store = SqliteMemoryStores(tmp_path).for_subject("Maria Silva")
        store.commit(write(1, FieldWrite("Personal", "age", 41), run_id="day1", at="2026-01-01T00:00:00+00:00"))
        store.commit(write(1, FieldWrite("Personal", "age", 42), run_id="day2", at="2026-06-01T00:00:00+00:00"))
        view = store.view()
        assert view.runs == ("day1", "day2") and view.subject == "Maria Silva"

    def test_the_targets_that_wrote(self, tmp_path):
        """Each conversation's target is kept from its first write (what a follower looks for); a run's
        later turns or a write without a target add none."""
        store = SqliteMemoryStores(tmp_path).for_subject("Maria Silva")
        store.commit(write(1, run_id="a", at="2026-01-01T00:00:00+00:00", target="intake-day1"))
        store.commit(write(2, run_id="a", at="2026-01-01T00:01:00+00:00", target="intake-day1"))
        store.commit(write(1, run_id="b", at="2026-01-02T00:00:00+00:00", target="intake-day2"))
        store.commit(write(1, run_id="c", at="2026-01-03T00:00:00+00:00"))
        assert store.view().targets == ("intake-day1", "intake-day2")

    def test_reopened_it_is_the_same(self, tmp_path):
        """What one process wrote, the next one reads (a second conversation)."""
        stores = SqliteMemoryStores(tmp_path)
        first = stores.for_subject("maria")
        first.commit(write(1, FieldWrite("Personal", "city", "Lisbon")))
        first.close()
        assert stores.for_subject("Maria").view().values() == {"Personal": {"city": "Lisbon"}}

    def test_scratch_is_throwaway(self, tmp_path):
        """A scratch memory writes no file."""
        stores = SqliteMemoryStores(tmp_path)
        store = stores.scratch()
        store.commit(write(1, FieldWrite("Personal", "age", 3)))
        assert store.view().values() == {"Personal": {"age": 3}} and list(tmp_path.iterdir()) == []

    def test_it_is_the_port(self, tmp_path):
        """The controller's stores satisfy the port the agent states."""
        stores: MemoryStores = SqliteMemoryStores(tmp_path)
        assert stores.scratch().view().nodes == ()


class TestSubjects:
    def test_the_file_is_named_by_a_hash(self, tmp_path):
        """No part of the name reaches the file system."""
        stores = SqliteMemoryStores(tmp_path)
        stores.for_subject("Maria Silva").close()
        (path,) = (tmp_path / "memory").iterdir()
        assert path.name == f"{subject_key('Maria Silva')}.sqlite" and "Maria" not in path.name

    def test_one_subject_however_it_is_typed(self):
        """Case, blanks and Unicode normalisation do not make another subject."""
        assert subject_key("Maria  Silva") == subject_key("maria silva") == subject_key("MARIA SILVA")
        assert subject_key("Jose\u0301") == subject_key("Jos\u00e9")

    @pytest.mark.parametrize("name", ["", " ", "../../etc/passwd", "a/b", "x" * 81, "bell\x07", "-rf", "_x"])
    def test_bad_names_are_refused(self, name):
        """A path, a control character, an empty or overlong name is one line (exit 2)."""
        with pytest.raises(ConfigError) as caught:
            check_subject(name)
        assert caught.value.exit_code == 2 and "\n" not in caught.value.one_line()

    @pytest.mark.parametrize("name", ["Maria Silva", "maria@example.org", "O'Brien", "José-Luis", "user_42"])
    def test_good_names_pass(self, name):
        """Names people have, and e-mail addresses, are subjects."""
        assert check_subject(name) == name
