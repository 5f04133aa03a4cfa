"""The in-environment judge's verdict is read as untrusted JSON."""

from __future__ import annotations

import json

from agents.bank_parser.env_judge import COMMAND, judge_spec, parse_verdict
from agents.ports.sandbox import SandboxLimits


class TestJudgeSpec:
    def test_only_the_result_and_the_expected_csv_go_in(self):
        """The judge's container gets result.json and expected.csv, never a parser."""
        spec = judge_spec("img", b"{}", b"a\n1\n", SandboxLimits(), {"agent": "check"})
        assert set(spec.inputs) == {"result.json", "expected.csv"}
        assert spec.command == COMMAND and spec.collect == ("verdict.json",)


class TestParseVerdict:
    def test_a_passing_verdict(self):
        """passed must be the JSON literal true."""
        raw = json.dumps({"status": "ok", "passed": True, "summary": "equal", "pandas": "2.2.3"}).encode()
        verdict = parse_verdict(raw, 1.5)
        assert verdict.passed and verdict.pandas == "2.2.3" and verdict.seconds == 1.5

    def test_truthy_non_boolean_is_not_a_pass(self):
        """A forged 'passed': 'yes' does not pass."""
        assert not parse_verdict(json.dumps({"status": "ok", "passed": "yes"}).encode(), 0).passed

    def test_malformed_and_error_verdicts_fail_with_a_reason(self):
        """Not JSON, or the judge's own error: failed, said plainly."""
        assert parse_verdict(b"\xff{", 0).first_difference == "judge: malformed verdict"
        error = parse_verdict(json.dumps({"status": "error", "message": "bad dtype"}).encode(), 0)
        assert not error.passed and "bad dtype" in error.first_difference
