"""Bad intake target input: one clear line and exit 2, before anything runs, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

from agents.ports.errors import ConfigError, TargetError
from controller.entry.cli import main
from tests.unit.agents.intake.helpers import DATA, example

NAME = "intake-future"


@pytest.fixture
def target(tmp_path):  # noqa: ANN001, ANN201
    shutil.copytree(DATA / NAME, tmp_path / NAME)
    return tmp_path / NAME


def run_cli(tmp_path, capsys, monkeypatch) -> tuple[int, str]:  # noqa: ANN001
    monkeypatch.setenv("SBX_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
    status = main(["run", "--target", NAME])
    err = capsys.readouterr().err
    return status, err


BAD = [
    ("target.toml", 'agent = "intake"\nnodes = ["Personal"]\n', "needs goal"),
    ("target.toml", 'agent = "intake"\ngoal = "g"\nnodes = ["../etc"]\n', "is not a node name"),
    ("target.toml", 'agent = "intake"\ngoal = "g"\nnodes = ["Personal", "Personal"]\n', "listed twice"),
    ("target.toml", 'agent = "intake"\ngoal = "g"\nnodes = ["Missing"]\n', "Missing.json"),
    ("nodes/Personal.json", "{not json", "is not valid JSON"),
    ("nodes/Personal.json", "[" * 5000 + "]" * 5000, "is not valid JSON"),
    ("nodes/Personal.json", json.dumps({"title": "Personal", "properties": {"age": {"type": "money"}}}),
     "properties.age.type"),
    ("nodes/Personal.json", json.dumps({"title": "Personal", "properties": {"age": {"type": "integer"}},
                                        "required": ["agee"]}), "required names 'agee'"),
    ("nodes/Personal.json", json.dumps({"title": "Other", "properties": {"age": {"type": "integer"}}}),
     "is not the node's name"),
    ("nodes/Personal.json", json.dumps({"title": "Personal", "properties": {"age": {
        "type": "integer", "x-on-event": {"alien_invasion": 0}}}}), "unknown event"),
    ("replies.txt", "", "holds no reply"),
    ("replies.txt", "x" * 2001 + "\n", "longer than 2000"),
    ("replies.txt", "ok\n" * 201, "more than 200"),
    ("replies.txt", b"\xff\xfe", "cannot read"),
    ("expected.json", '{"Personal": {"age": [1]}}', "must be"),
    ("expected.json", '{"Nobody": {"age": 1}}', "is not one of the target's nodes"),
    ("expected.json", '{"Personal": {"shoe_size": 1}}', "not a property of Personal"),
]


class TestBadInput:
    @pytest.mark.parametrize(("file", "content", "says"), BAD, ids=[b[2] for b in BAD])
    def test_one_line_exit_2(self, target, tmp_path, capsys, monkeypatch, file, content, says):
        path = target / file
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        status, err = run_cli(tmp_path, capsys, monkeypatch)
        assert status == 2
        assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err
        assert "Traceback" not in err

    def test_a_missing_script_is_a_target_error(self, target):
        (target / "replies.txt").unlink()
        with pytest.raises(TargetError, match="no replies.txt"):
            example(NAME, target.parent)

    def test_an_llm_provider_without_its_key_is_one_line(self, target, tmp_path, capsys, monkeypatch):
        for name in ("SBX_LLM__API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("SBX_CODER", "gemini")
        status, err = run_cli(tmp_path, capsys, monkeypatch)
        assert status == 2 and "needs an API key" in err and err.count("\n") == 1

    def test_intake_keys_on_another_agent_are_refused(self, target):
        (target / "target.toml").write_text('agent = "idris"\nproject = "P"\ngoal = "g"\n')
        with pytest.raises(ConfigError, match="goal and nodes apply to agent"):
            example(NAME, target.parent)

    def test_both_schema_forms_for_one_node_are_refused(self, target):
        (target / "nodes").mkdir()
        (target / "nodes" / "Personal.json").write_text('{"title": "Personal"}')
        (target / "nodes" / "Personal.toml").write_text('title = "Personal"\n')
        with pytest.raises(ConfigError, match="both of"):
            example(NAME, target.parent)
