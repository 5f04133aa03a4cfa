"""The memory port's SQLite store: a write applies whole and once per turn, the history keeps
every value with the one it replaced, conflicts open and close, a subject is filed under a
hash of its name (never the name), and a name outside the safe pattern is refused."""

from __future__ import annotations

import pytest

from agents.ports.errors import ConfigError
from agents.ports.memory import check_subject, subject_key
from controller.platform.memory_store import SqliteMemoryStores
from tests.unit.controller.platform.memory_contract import ContractMemory


@pytest.fixture
def stores(tmp_path) -> SqliteMemoryStores:  # noqa: ANN001
    return SqliteMemoryStores(tmp_path)


class TestCommit(ContractMemory):
    """The files' memories."""


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
