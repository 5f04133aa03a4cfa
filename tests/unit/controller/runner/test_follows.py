"""A run that follows another target's conversation is refused, before anything runs, until its
subject's memory holds that conversation: the CLI's one line (exit 2), the service's 422."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.ports.errors import TargetError
from agents.ports.memory import MemoryWrite
from agents.ports.run import Follows, Plan
from agents.ports.sandbox import SandboxLimits
from controller.entry.cli import main
from controller.platform.memory_sql import SqliteMemoryStores
from controller.runner.follows import require_followed
from tests.unit.controller.entry.service.conftest import make_service


def plan(follows: Follows | None) -> Plan:
    return Plan(agent="intake", target="intake-day2", max_attempts=2, limits=SandboxLimits(), coder=None,
                coder_name="offline", banner="", image=None, follows=follows)


def remembered(runs: Path, subject: str, target: str) -> None:
    """What a conversation of ``target`` with ``subject`` leaves: a write of its first turn."""
    store = SqliteMemoryStores(runs).for_subject(subject)
    store.commit(MemoryWrite("day1-run", 1, "2026-01-01T00:00:00+00:00", target=target))
    store.close()


class TestRequireFollowed:
    def test_no_memory_of_the_followed_target(self, tmp_path):
        """No memory at all, or one of another target only: refused, saying what to run first; none is made."""
        stores = SqliteMemoryStores(tmp_path)
        follows = Follows("intake-day1", "Maria Silva")
        with pytest.raises(TargetError) as caught:
            require_followed(plan(follows), stores)
        assert caught.value.one_line() == (
            "intake-day2 follows intake-day1, and subject 'Maria Silva' has no memory of intake-day1 (run "
            "intake-day1 first with the same --subject: python -m controller run --target intake-day1 "
            "--subject 'Maria Silva')")
        assert not stores.has_subject("Maria Silva")
        remembered(tmp_path, "Maria Silva", "intake-future")
        with pytest.raises(TargetError):
            require_followed(plan(follows), stores)

    def test_after_the_followed_conversation(self, tmp_path):
        """Once the subject's memory holds it (any spelling of the subject), the run goes ahead."""
        remembered(tmp_path, "maria silva", "intake-day1")
        require_followed(plan(Follows("intake-day1", "Maria  Silva")), SqliteMemoryStores(tmp_path))
        require_followed(plan(None), SqliteMemoryStores(tmp_path))

    def test_no_subject(self, tmp_path):
        """Following a conversation without a subject (none in target.toml, no --subject): refused."""
        with pytest.raises(TargetError, match="none is named"):
            require_followed(plan(Follows("intake-day1", None)), SqliteMemoryStores(tmp_path))


class TestEntryPoints:
    def test_the_cli_refuses_day_two_alone(self, tmp_path, capsys, monkeypatch):
        """run --target intake-day2 before intake-day1: one line, exit 2, nothing written; with the
        subject given, that subject is the one looked up; after Day 1 (same subject) it runs."""
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path))
        assert main(["run", "--target", "intake-day2"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: intake-day2 follows intake-day1, and subject 'Maria Silva'")
        assert not any(tmp_path.iterdir())
        assert main(["run", "--target", "intake-day1", "--subject", "Ana"]) == 0
        assert main(["run", "--target", "intake-day2"]) == 2
        assert main(["run", "--target", "intake-day2", "--subject", "ana"]) == 0

    def test_the_service_refuses_it_with_the_same_line(self, tmp_path):
        """POST /v1/runs with intake-day2 before Day 1: 422 with the CLI's line; after it, accepted."""
        service = make_service(tmp_path)
        headers = service.token("ana")
        response = service.client.post("/v1/runs", headers=headers, json={"target": "intake-day2"})
        assert response.status_code == 422
        assert response.json()["detail"].startswith("intake-day2 follows intake-day1, and subject 'Maria Silva' has "
                                                    "no memory of intake-day1 (run intake-day1 first")
        remembered(tmp_path / "runs", "Maria Silva", "intake-day1")
        response = service.client.post("/v1/runs", headers=headers, json={"target": "intake-day2"})
        assert response.status_code == 202, response.text
