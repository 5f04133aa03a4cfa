"""The memory port's SQLite store: a write applies whole and once per turn, the history keeps
every value with the one it replaced, conflicts open and close, a subject is filed under a
hash of its name (never the name), and a name outside the safe pattern is refused."""

from __future__ import annotations

import threading

import pytest

from agents.ports.errors import ConfigError
from agents.ports.memory import FieldWrite, check_subject, subject_key
from controller.platform.memory_sql import SqliteMemoryStores
from tests.unit.controller.platform.memory_contract import ContractMemory, write


@pytest.fixture
def stores(tmp_path) -> SqliteMemoryStores:  # noqa: ANN001
    return SqliteMemoryStores(tmp_path)


class TestCommit(ContractMemory):
    """The files' memories."""


class TestTwoConversations:
    def test_two_conversations_of_one_subject_write_in_turn(self, tmp_path):
        """40 turns from two writers on one file: all kept, each history entry's previous value the
        entry before it (the file's write lock, waited for up to the busy timeout). Both open the new
        file at once (two connections switching a new file to WAL at once failed: "database is locked")."""
        start = threading.Barrier(2)

        def converse(run_id: str) -> None:
            start.wait()
            store = SqliteMemoryStores(tmp_path).for_subject("Maria Silva")
            for turn in range(1, 21):
                store.commit(write(turn, FieldWrite("Personal", "age", f"{run_id}-{turn}"), run_id=run_id,
                                   at=f"2026-01-01T00:00:{turn:02d}+00:00"))

        writers = [threading.Thread(target=converse, args=(name,)) for name in ("a", "b")]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(60)
        history = SqliteMemoryStores(tmp_path).for_subject("Maria Silva").view().node("Personal").field("age").history
        assert len(history) == 40
        assert [h.previous for h in history[1:]] == [h.value for h in history[:-1]]

    def test_forgetting_deletes_the_file_and_asking_creates_none(self, tmp_path):
        """has_subject makes no file; forget_subject removes the file with its -wal and -shm."""
        stores = SqliteMemoryStores(tmp_path)
        assert not stores.has_subject("Maria Silva") and not (tmp_path / "memory").exists()
        stores.for_subject("Maria Silva").commit(write(1, FieldWrite("Personal", "age", 41)))
        assert stores.has_subject("Maria Silva") and stores.forget_subject("Maria Silva")
        assert list((tmp_path / "memory").iterdir()) == [] and not stores.forget_subject("Maria Silva")


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


def test_a_file_system_without_hard_links_still_gets_its_memory(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """A new memory file is linked into place; where the file system refuses hard links (some network
    and FUSE ones), it is made in place instead, and nothing of the attempt is left beside it."""

    def no_links(source, target):  # noqa: ANN001, ANN202
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("controller.platform.memory_sql.os.link", no_links)
    store = SqliteMemoryStores(tmp_path).for_subject("Maria Silva")
    assert store.commit(write(1, FieldWrite("Personal", "age", 41)))
    assert store.view().node("Personal").fields[0].value == 41  # type: ignore[union-attr]
    assert [p.name for p in (tmp_path / "memory").iterdir() if p.name.startswith(".")] == []
