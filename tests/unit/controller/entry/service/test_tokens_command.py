"""``python -m controller tokens``: a token printed once, stored hashed, listed, removed."""

from __future__ import annotations

import pytest

from controller.entry.cli import main
from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import token_hash


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "runs"


def test_add_list_remove(runs, capsys):
    assert main(["tokens", "add", "alice", "--admin"]) == 0
    token, note = capsys.readouterr().out.splitlines()
    assert token.startswith("sbx_") and "shown only this once" in note
    store = SqliteStore(runs / "service.sqlite")
    found = store.token_by_hash(token_hash(token))
    assert found is not None and (found.name, found.admin) == ("alice", True)
    assert token.encode() not in (runs / "service.sqlite").read_bytes()

    assert main(["tokens", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("alice") and "admin" in listed and token not in listed

    assert main(["tokens", "remove", "alice"]) == 0
    assert not store.has_tokens()


def test_a_duplicate_or_bad_name_or_unknown_removal_is_one_line(runs, capsys):
    assert main(["tokens", "add", "alice"]) == 0
    capsys.readouterr()
    assert main(["tokens", "add", "alice"]) == 2
    assert capsys.readouterr().err.startswith("error: a token called 'alice' exists already")
    assert main(["tokens", "add", "../evil"]) == 2
    assert capsys.readouterr().err.startswith("error: '../evil' is not a token name")
    assert main(["tokens", "remove", "bob"]) == 2
    assert capsys.readouterr().err.startswith("error: no token called 'bob'")


def test_a_token_added_to_postgres_does_not_claim_a_sqlite_file(runs, capsys, monkeypatch):
    """With SBX_SERVICE__STORE=postgres (the Kubernetes token Job) the note names that store, not
    a SQLite path nobody reads. (The store itself is a SQLite double here; PostgreSQL is tested in
    tests/integration/store/.)"""
    import controller.entry.service.tokens as tokens_module

    monkeypatch.setenv("SBX_SERVICE__STORE", "postgres")
    monkeypatch.setenv("SBX_SERVICE__POSTGRES_DSN", "postgresql://u:secret@db.invalid/sandloop")
    monkeypatch.setattr(tokens_module, "open_store", lambda settings: SqliteStore(runs / "double.sqlite"))
    assert main(["tokens", "add", "ops", "--admin"]) == 0
    token, note = capsys.readouterr().out.splitlines()
    assert token.startswith("sbx_") and "added to the PostgreSQL store" in note
    assert ".sqlite" not in note and "secret" not in note
