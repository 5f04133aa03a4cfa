"""A tool or validator call: what goes into its sandbox, and how what comes out is decoded.

The sandbox is a test double (``ScriptedCallSandbox``); the real engine runs the same specs
in tests/integration/agents/test_blueprint_agent.py.
"""

from __future__ import annotations

import json

import pytest

from agents.blueprint.model import ToolSpec
from agents.blueprint.research import research
from agents.blueprint.sandboxed import Call, call_spec, run_call
from agents.ports.sandbox import SandboxLimits
from tests.unit.agents.blueprint.fakes import Answer, ScriptedCallSandbox, value

LIMITS = SandboxLimits(timeout_seconds=5)


def spec(role: str = "tool", **files: bytes):  # noqa: ANN201
    call = Call(role, "t", "def run(data):\n    return 1\n", dict(files), report="# R\n")
    return call_spec("sandloop/python-parser:test", call, LIMITS, {"run_id": "u", "tool": "t"})


class TestSpec:
    def test_inputs_are_the_harness_the_code_the_call_and_the_named_files(self):
        """Only the files the tool names go in; the harness is sent as text and run by python3 -I."""
        made = spec(**{"data.json": b"{}"})
        assert sorted(made.inputs) == ["call.json", "code.py", "data.json", "harness.py"]
        assert made.command == ("python3", "-I", "/work/in/harness.py", "/work/in", "/work/out/result.json")
        assert made.collect == ("result.json",) and made.limits.timeout_seconds == 5
        assert json.loads(made.inputs["call.json"]) == {"role": "tool", "files": ["data.json"]}
        assert b"def main(argv" in made.inputs["harness.py"]

    def test_a_validator_also_gets_the_report(self):
        assert spec("validator").inputs["report.md"] == b"# R\n"

    def test_a_data_file_cannot_replace_the_harness(self):
        """A data file named like one of the harness's own inputs is not sent."""
        made = spec(**{"harness.py": b"import os"})
        assert made.inputs["harness.py"] != b"import os"


def run(answer: Answer):  # noqa: ANN201
    return run_call(ScriptedCallSandbox({"t": [answer]}), spec())


class TestDecoding:
    def test_a_value(self):
        result = run(value({"a": [1, 2]}))
        assert result.ok and result.value == {"a": [1, 2]} and result.error == ""

    @pytest.mark.parametrize(("answer", "error"), [
        (Answer(timed_out=True), "killed at the 5 s timeout"),
        (Answer(oom=True, exit_code=137), "killed at the 512 MiB memory limit"),
        (Answer(exit_code=1, stderr=b"Traceback\nMemoryError\x1b[2J\n"), "no result (exit 1): MemoryError?[2J"),
        (Answer(refused={"result.json": "a folder, not a file"}), "its result was refused: a folder, not a file"),
        (Answer(raw=b"[" * 100 + b"]" * 100), "its result was refused: nested 100 levels deep"),
        (Answer(raw=b"x" * (300 * 1024)), "its result was refused: 307200 bytes, more than the 262144 allowed"),
        (Answer(raw=b'{"ok": true, "ok": false}'), "appears more than once"),
        (Answer(raw=b"\xff\xfe"), "not UTF-8"),
        (Answer({"value": 1}), "its result is not"),
        (Answer({"ok": False, "error": "ValueError: bad\nline"}), "ValueError: bad | line"),
    ])
    def test_every_failure_is_one_line(self, answer, error):
        """Limits, crashes and hostile result documents: ok is false and the error says why."""
        result = run(answer)
        assert not result.ok and result.value is None
        assert error in result.error and "\n" not in result.error


class TestResearch:
    def test_file_tools_are_read_on_the_host_and_code_tools_run_in_a_sandbox(self):
        tools = [ToolSpec(name="plain", files=["a.csv"]), ToolSpec(name="t", code="def run(data): ...")]
        sandbox = ScriptedCallSandbox({"t": [value(42)]})
        found = research(tools, {"a.csv": b"x,y\n1,2\n"}, sandbox, "img", LIMITS, {})
        assert [(f["tool"], f["ok"], f["value"], f["sandboxed"]) for f in found] == [
            ("plain", True, [{"x": "1", "y": "2"}], False), ("t", True, 42, True)]
        assert sandbox.calls == {"t": 1}

    def test_a_bad_data_file_is_a_failed_finding(self):
        found = research([ToolSpec(name="plain", files=["a.json"])], {"a.json": b"{nope"}, ScriptedCallSandbox({}),
                         "img", LIMITS, {})
        assert not found[0]["ok"] and found[0]["error"].startswith("a.json: not valid JSON")
