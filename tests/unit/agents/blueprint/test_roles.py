"""The offline roles: directives round-trip through lessons, QA's built-in rules, the writer."""

from __future__ import annotations

import pytest

from agents.blueprint import directives
from agents.blueprint.checks import builtin_issues, markdown_issues, validator_issue, word_count
from agents.blueprint.model import Blueprint, ValidatorSpec
from agents.blueprint.research import Finding
from agents.blueprint.writer import write_report

BLUEPRINT = Blueprint.model_validate({
    "name": "unit", "title": "Unit report", "subject": "Unit Co", "goal": "A test.",
    "tools": [{"name": "facts", "files": ["f.json"]}, {"name": "rows", "files": ["r.csv"]}],
    "sections": [{"title": "Facts", "tools": ["facts"]}, {"title": "Rows", "tools": ["rows"]}],
    "qa": {"min_words": 10, "required_keywords": ["gamma"]},
})
FACTS = Finding(tool="facts", ok=True, value={f"k{i}": f"v{i}" for i in range(6)}, error="", seconds=0.0,
                sandboxed=False)
ROWS = Finding(tool="rows", ok=True, value=[{"name": n, "n": i} for i, n in
                                            enumerate(["alpha", "beta", "delta", "epsilon", "gamma"])],
               error="", seconds=0.0, sandboxed=False)


class TestDirectives:
    @pytest.mark.parametrize(("kind", "value"), [("detail", ""), ("section", "Risks"), ("keyword", "EBITDA"),
                                                 ("fill", "")])
    def test_a_lesson_turns_back_into_its_directive(self, kind, value):
        """The text the lessons store keeps gives the manager of a later run the same directive."""
        made = directives.make(kind, value, why="because")
        back = directives.from_lesson(made["text"])
        assert back is not None and (back["kind"], back["value"]) == (kind, value)
        assert back["source"] == "lesson"

    def test_text_that_is_not_ours_is_no_directive(self):
        assert directives.from_lesson("parse() raised KeyError") is None
        assert directives.from_lesson("keyword: mention nothing quoted") is None

    def test_merged_keeps_the_first_of_each(self):
        a, b = directives.make("keyword", "X", source="lesson"), directives.make("keyword", "x", source="qa")
        assert directives.merged([a, b, directives.make("detail")]) == [a, directives.make("detail")]


class TestBuiltinChecks:
    def test_each_rule_fails_with_its_fix(self):
        """Too short, a missing section, a missing keyword: each issue carries its directive."""
        blueprint = BLUEPRINT.model_copy(update={"qa": BLUEPRINT.qa.model_copy(update={"min_words": 500})})
        issues = builtin_issues("# Unit report\n\n## Facts\n\nSome text.\n", blueprint)
        assert [(i["code"], i["fix"]["kind"], i["fix"]["value"]) for i in issues] == [
            ("too_short", "detail", ""), ("missing_section", "section", "Rows"),
            ("missing_keyword", "keyword", "gamma")]

    @pytest.mark.parametrize(("report", "problem"), [
        ("No title\n\n## A\n\ntext\n", "does not start with a '# ' title"),
        ("# T\n\ntext only\n", "has no '## ' section"),
        ("# T\n\n## A\n\n```\ncode\n", "a code fence is never closed"),
        ("# T\n\n## A\n\n## B\n\ntext\n", "section(s) without text: 'A'"),
    ])
    def test_markdown_structure(self, report, problem):
        (issue,) = markdown_issues(report)
        assert problem in issue["message"] and issue["fix"]["kind"] == "fill"

    def test_words_count_numbers_not_marks(self):
        assert word_count("# Title\n\n| a | b |\n| --- | --- |\n| 1,000 | x-y |\n") == 5


class TestValidatorVerdicts:
    SPEC = ValidatorSpec(name="v", code="def validate(report, data): ...")

    def test_a_pass_is_no_issue(self):
        assert validator_issue(self.SPEC, True, {"passed": True}, "") is None

    def test_a_fail_carries_its_fix(self):
        issue = validator_issue(self.SPEC, True, {"passed": False, "message": "no\x1b[2J", "fix": {"kind": "detail"}},
                                "")
        assert issue is not None and issue["fix"]["kind"] == "detail"
        assert "\x1b" not in issue["message"]

    @pytest.mark.parametrize("value", [None, [], "yes", {"passed": "yes"}, {"passed": False, "fix": {"kind": "rm"}}])
    def test_anything_else_is_a_failed_check(self, value):
        issue = validator_issue(self.SPEC, True, value, "")
        assert issue is not None and "returned no verdict" in issue["message"]

    def test_a_validator_that_did_not_run_fails_the_check(self):
        issue = validator_issue(self.SPEC, False, None, "killed at the 10 s timeout")
        assert issue is not None and "failed to run: killed at the 10 s timeout" in issue["message"]


class TestWriter:
    def test_it_is_deterministic_and_brief_by_default(self):
        first = write_report(BLUEPRINT, [FACTS, ROWS], [])
        assert first == write_report(BLUEPRINT, [FACTS, ROWS], [])
        assert "- … 3 more facts" in first and "_2 of 5 rows left out._" in first

    def test_detail_shows_everything(self):
        report = write_report(BLUEPRINT, [FACTS, ROWS], [directives.make("detail")])
        assert "k5" in report and "epsilon" in report and "more facts" not in report and "left out" not in report
        assert word_count(report) > word_count(write_report(BLUEPRINT, [FACTS, ROWS], []))

    def test_a_keyword_keeps_the_rows_that_hold_it(self):
        report = write_report(BLUEPRINT, [FACTS, ROWS], [directives.make("keyword", "gamma")])
        assert "| gamma |" in report and "epsilon" not in report

    def test_a_section_directive_adds_the_section(self):
        report = write_report(BLUEPRINT, [FACTS, ROWS], [directives.make("section", "Risks")])
        assert "\n## Risks\n" in report and not markdown_issues(report)

    def test_tool_output_cannot_break_the_markdown(self):
        """A finding's cells cannot end a table cell, start a heading or carry escapes."""
        hostile = Finding(tool="rows", ok=True, value=[{"name": "## Fake | heading\n# Title\x1b[2J"}], error="",
                          seconds=0.0, sandboxed=False)
        report = write_report(BLUEPRINT, [FACTS, hostile], [])
        assert "\x1b" not in report
        assert [line for line in report.splitlines() if line.startswith("#")] == [
            "# Unit report", "## Summary", "## Facts", "## Rows"]
        assert "| Fake / heading / # Title?[2J |" in report

    def test_a_failed_tool_is_said_not_hidden(self):
        failed = Finding(tool="rows", ok=False, value=None, error="killed at the 10 s timeout", seconds=10.0,
                         sandboxed=True)
        report = write_report(BLUEPRINT, [FACTS, failed], [])
        assert "_The tool rows failed: killed at the 10 s timeout._" in report
        assert "Missing: the tool(s) rows returned nothing usable." in report
