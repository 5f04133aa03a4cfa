"""``run --interactive``: replies from the terminal, bounded like a script's, end of input ends."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from agents.intake.patterns import MAX_REPLY_CHARS
from agents.intake.replies import from_terminal, scripted
from agents.registry import get_agent
from controller.platform.progress import Progress
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.runner.agent_runner import Runner


def test_scripted_replies_end_with_the_script():
    reply = scripted(("a", "b"))
    assert [reply(1, "q"), reply(2, "q"), reply(3, "q")] == ["a", "b", None]


def test_the_terminal_shows_the_question_and_reads_one_bounded_line():
    out = io.StringIO()
    reply = from_terminal(io.StringIO("x" * (MAX_REPLY_CHARS * 3) + "\nsecond\n"), out)
    first = reply(1, "How old are you?\x1b[2J")
    assert first == "x" * MAX_REPLY_CHARS  # the rest of the long line is discarded, not the next reply
    assert reply(2, "Which city?") == "second"
    assert reply(3, "More?") is None  # end of input ends the conversation
    assert "  ? How old are you?" in out.getvalue() and "\x1b" not in out.getvalue()


def test_an_interactive_run_needs_no_replies_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """A target without replies.txt runs from what is typed; the answers reach the graph memory."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / "intake-cross-node", data / "t")
    for name in ("replies.txt", "expected.json"):
        (data / "t" / name).unlink()
    monkeypatch.setattr("sys.stdin", io.StringIO("I am 41 years old\n"))
    settings = Settings(_env_file=None, data_dir=data, runs_dir=tmp_path / "runs", interactive=True)
    Runner(settings, Progress()).run(get_agent("intake"), "t", None)
    assert "? How old are you?" in capsys.readouterr().out
    (run_dir,) = (tmp_path / "runs").glob("*-t-*")
    assert json.loads((run_dir / "run.json").read_text())["interactive"] is True
    graph = json.loads((run_dir / "graph.json").read_text())
    assert "41" in json.dumps(graph)
