"""Replies over the service: the run folder's reply box (agents.ports.replies) and an intake run
that waits, checkpointed, for each reply and resumes with it.

A run without a reply for its question must stop with its checkpoint and nothing else: no
summary.json (resume refuses a finished run) and no record in the run history (it is not over;
the dashboard would count it as an error). Replies are hostile text: bounded, one line, and a
turn's reply is written once (a second one never replaces the first).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from agents.ports.errors import AwaitingReply, RunPaused
from agents.ports.replies import (
    MAX_REPLY_CHARS,
    QUESTION_FILE,
    read_question,
    read_reply,
    reply_file,
    write_question,
    write_reply,
)
from agents.registry import get_agent
from controller.entry import cli
from controller.platform.progress import Progress
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.runner.agent_runner import Runner

EXAMPLE = PROJECT_ROOT / "data" / "intake-cross-node"


def script() -> list[str]:
    lines = (EXAMPLE / "replies.txt").read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


class TestReplyBox:
    def test_a_reply_is_written_once_per_turn(self, tmp_path: Path):
        assert read_reply(tmp_path, 1) is None
        assert write_reply(tmp_path, 1, "I am 41") is True
        assert write_reply(tmp_path, 1, "I am 99") is False  # the first reply stays
        assert read_reply(tmp_path, 1) == "I am 41"
        assert [p.name for p in reply_file(tmp_path, 1).parent.iterdir()] == ["1.txt"]  # no temporary left

    def test_a_reply_is_one_bounded_line(self, tmp_path: Path):
        reply_file(tmp_path, 2).parent.mkdir(parents=True)
        reply_file(tmp_path, 2).write_bytes(b"first\r\nsecond\n" + b"x" * (MAX_REPLY_CHARS * 10) + b"\xff")
        text = read_reply(tmp_path, 2)
        assert text is not None and text.startswith("first second ") and len(text) == MAX_REPLY_CHARS

    def test_the_question_round_trips_and_junk_is_none(self, tmp_path: Path):
        assert read_question(tmp_path) is None
        write_question(tmp_path, 3, "How old are you?")
        pending = read_question(tmp_path)
        assert pending is not None and (pending.turn, pending.question) == (3, "How old are you?")
        for junk in ('{"turn": 0, "question": "q"}', '{"turn": true, "question": "q"}', "[1]", "not json",
                     '{"turn": 2}'):
            (tmp_path / QUESTION_FILE).write_text(junk)
            assert read_question(tmp_path) is None, junk


class TestWaitingRun:
    def _settings(self, tmp_path: Path, **extra: object) -> Settings:
        return Settings(_env_file=None, data_dir=tmp_path / "data", runs_dir=tmp_path / "runs", **extra)  # type: ignore[arg-type]

    def test_a_run_waits_checkpointed_for_each_reply_and_resumes_to_passed(self, tmp_path: Path):
        """No replies.txt needed; each stop leaves the question and no summary and no history row;
        the resumed run (a plain resume: run.json says the replies come from the box) passes."""
        shutil.copytree(EXAMPLE, tmp_path / "data" / "t")
        (tmp_path / "data" / "t" / "replies.txt").unlink()
        run_dir = tmp_path / "runs" / "r1"
        with pytest.raises(AwaitingReply) as first, capture_logs() as logs:
            Runner(self._settings(tmp_path, await_replies=True), Progress()).run(get_agent("intake"), "t", None,
                                                                                 run_id="r1")
        events = {entry["event"] for entry in logs}
        assert {"node.paused", "run.paused"} <= events and not events & {"node.failed", "loop.crashed"}
        assert first.value.turn == 1 and first.value.exit_code == 75
        assert json.loads((run_dir / "run.json").read_text())["await_replies"] is True
        turns = 0
        for reply in script():
            pending = read_question(run_dir)
            assert pending is not None and pending.turn == turns + 1
            assert not (run_dir / "summary.json").exists()
            assert _history_rows(tmp_path) == 0
            assert write_reply(run_dir, pending.turn, reply)
            turns += 1
            try:
                code = Runner(self._settings(tmp_path), Progress()).resume("r1")
            except AwaitingReply:
                continue
            break
        assert code == 0 and turns == len(script())
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "passed"
        assert _history_rows(tmp_path) == 1

    def test_the_cli_says_it_waits_and_exits_75(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
        shutil.copytree(EXAMPLE, tmp_path / "data" / "t")
        monkeypatch.setenv("SBX_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
        code = cli.main(["run", "--target", "t", "--run-id", "r2", "--await-replies"])
        out, err = capsys.readouterr()
        assert code == 75 == RunPaused.exit_code
        assert "run r2 waiting for reply 1: " in out and "error:" not in err

    def test_a_scripted_run_is_unchanged(self, tmp_path: Path):
        """Without await_replies the script is read as before; nothing is written to the box."""
        shutil.copytree(EXAMPLE, tmp_path / "data" / "t")
        code = Runner(self._settings(tmp_path), Progress()).run(get_agent("intake"), "t", None, run_id="r3")
        assert code == 0 and not (tmp_path / "runs" / "r3" / QUESTION_FILE).exists()


def _history_rows(tmp_path: Path) -> int:
    path = tmp_path / "runs" / "history.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
