"""What the memory port's stores do wherever they are: the SQLite files (test_memory_store.py),
the store's tables on SQLite (test_memory_sql.py) and on PostgreSQL (tests/integration/store)."""

from __future__ import annotations

from agents.ports.memory import ConflictWrite, FieldWrite, MemoryStores, MemoryWrite


def write(turn: int, *fields: FieldWrite, run_id: str = "r1", at: str = "2026-01-01T00:00:00+00:00",
          **more: object) -> MemoryWrite:
    return MemoryWrite(run_id, turn, at, fields, **more)  # type: ignore[arg-type]


class ContractMemory:
    """Needs a fixture ``stores``: the memory port's stores, empty, writing nothing under ``tmp_path``."""

    def test_a_value_and_the_one_it_replaced(self, stores):
        """The history keeps each value with the previous one; the field holds the last applied."""
        store = stores.for_run("r1")
        store.commit(write(1, FieldWrite("Income", "annual_amount", 80000)))
        store.commit(write(2, FieldWrite("Income", "annual_amount", 0, source="life_event", correction=True)))
        field = store.view().node("Income").field("annual_amount")
        assert field.value == 0
        assert [(h.value, h.previous, h.turn) for h in field.history] == [(80000, None, 1), (0, 80000, 2)]

    def test_a_turn_applies_once(self, stores):
        """A second commit of the same (run, turn) changes nothing (a resumed run)."""
        store = stores.for_run("r1")
        assert store.commit(write(1, FieldWrite("Personal", "age", 41)))
        assert not store.commit(write(1, FieldWrite("Personal", "age", 99)))
        assert store.view().values() == {"Personal": {"age": 41}}

    def test_past_and_future_are_history_only(self, stores):
        """An entry that is not applied leaves the current value alone."""
        store = stores.for_run("r1")
        store.commit(write(1, FieldWrite("Income", "annual_amount", 65000),
                           FieldWrite("Income", "annual_amount", 75000, temporal="future", applied=False)))
        field = store.view().node("Income").field("annual_amount")
        assert field.value == 65000 and [h.applied for h in field.history] == [True, False]

    def test_conflicts_open_and_close(self, stores):
        """A conflict stays open until a write resolves it (by id, or every one of its field)."""
        store = stores.for_run("r1")
        store.commit(write(1, conflicts=(ConflictWrite("Personal", "age", 41, 42),
                                         ConflictWrite("Income", "annual_amount", 1, 2))))
        first, second = store.view().conflicts
        store.commit(write(2, close=((first.id, "confirmed"),)))
        store.commit(write(3, close_fields=(("Income", "annual_amount", "corrected"),)))
        view = store.view()
        assert view.open_conflicts() == () and view.conflicts[0].resolution.startswith("confirmed")

    def test_the_runs_that_wrote(self, stores):
        """A subject's memory lists its conversations, oldest first."""
        store = stores.for_subject("Maria Silva")
        store.commit(write(1, FieldWrite("Personal", "age", 41), run_id="day1", at="2026-01-01T00:00:00+00:00"))
        store.commit(write(1, FieldWrite("Personal", "age", 42), run_id="day2", at="2026-06-01T00:00:00+00:00"))
        view = store.view()
        assert view.runs == ("day1", "day2") and view.subject == "Maria Silva"

    def test_the_targets_that_wrote(self, stores):
        """Each conversation's target is kept from its first write (what a follower looks for); a run's
        later turns or a write without a target add none."""
        store = stores.for_subject("Maria Silva")
        store.commit(write(1, run_id="a", at="2026-01-01T00:00:00+00:00", target="intake-day1"))
        store.commit(write(2, run_id="a", at="2026-01-01T00:01:00+00:00", target="intake-day1"))
        store.commit(write(1, run_id="b", at="2026-01-02T00:00:00+00:00", target="intake-day2"))
        store.commit(write(1, run_id="c", at="2026-01-03T00:00:00+00:00"))
        assert store.view().targets == ("intake-day1", "intake-day2")

    def test_reopened_it_is_the_same(self, stores):
        """What one process wrote, the next one reads (a second conversation)."""
        first = stores.for_subject("maria")
        first.commit(write(1, FieldWrite("Personal", "city", "Lisbon")))
        first.close()
        assert stores.for_subject("Maria").view().values() == {"Personal": {"city": "Lisbon"}}

    def test_scratch_is_throwaway(self, stores, tmp_path):
        """A scratch memory writes no file."""
        store = stores.scratch()
        store.commit(write(1, FieldWrite("Personal", "age", 3)))
        assert store.view().values() == {"Personal": {"age": 3}} and list(tmp_path.iterdir()) == []

    def test_it_is_the_port(self, stores):
        """The controller's stores satisfy the port the agent states."""
        port: MemoryStores = stores
        assert port.scratch().view().nodes == ()
