"""Issue 41: QA grounded in the findings, the blueprint's decision, and tables cut at a word's end.

Each rule: a report that breaks it fails QA with the fix, and the writer's retry, following the fix,
passes. The offline writer's retry is the real one; an LLM writer's runs against the scripted
OpenAI-compatible server (a TEST DOUBLE, tests/doubles/llm_servers.py). The supplier-review
example (data/) runs through the whole loop with its sandboxed tool answered by the fake sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.blueprint import directives
from agents.blueprint.checks import builtin_issues
from agents.blueprint.decision import decide, recommended
from agents.blueprint.llm_roles import LLMRoles
from agents.blueprint.loading import load_target
from agents.blueprint.model import Blueprint
from agents.blueprint.research import Finding, research
from agents.blueprint.run import run_blueprint_agent
from agents.blueprint.state import BlueprintContext
from agents.blueprint.writer import _cell, write_report
from agents.ports.sandbox import SandboxLimits
from controller.platform.artefacts import RunArtefacts
from controller.platform.settings import PROJECT_ROOT
from tests.doubles.llm_servers import OpenAIServer, Reply
from tests.unit.agents.blueprint.fakes import ScriptedCallSandbox, value
from tests.unit.agents.blueprint.test_findings import run, target

EXAMPLE = "supplier-review"
TARGET = load_target(PROJECT_ROOT / "data", EXAMPLE)
SEVERITY = {"high": 2, "medium": 1, "low": 1}


def sandbox() -> ScriptedCallSandbox:
    """The example's one sandboxed tool (severity), answered as its code would (counted from incidents.csv)."""
    return ScriptedCallSandbox({"severity": [value(SEVERITY)] * 3})


FINDINGS = research(list(TARGET.blueprint.tools), TARGET.data, sandbox(), "img", SandboxLimits(), {})
GOOD = write_report(TARGET.blueprint, FINDINGS, [directives.make("keyword", "on-time")])


def codes(report: str, blueprint: Blueprint = TARGET.blueprint, findings: list[Finding] = FINDINGS) -> list[str]:
    return [issue["code"] for issue in builtin_issues(report, blueprint, findings)]


def issues_of(report: str, code: str) -> list[Any]:
    return [i for i in builtin_issues(report, TARGET.blueprint, FINDINGS) if i["code"] == code]


def test_the_offline_report_is_grounded_and_recommends_what_the_rules_choose():
    assert codes(GOOD) == []
    assert "Recommendation: **renew with conditions**." in GOOD
    assert "on time rate pct (scorecard) is 91.9, below 95" in GOOD  # the reason, from the finding


class TestAbsence:
    def test_a_false_absence_claim_fails_with_a_cite_fix_and_the_retry_states_the_finding(self):
        """The issue's sentence: findings held on_time_rate_pct 91.9, the report said they said nothing."""
        report = GOOD.replace("On on-time: on time rate pct 91.9 (scorecard).",
                              "The research findings say nothing about on-time.")
        (issue,) = issues_of(report, "false_absence")
        assert "on_time_rate_pct: 91.9" in issue["message"] and issue["fix"]["kind"] == "cite"
        assert issue["fix"]["value"] == "on-time"
        retry = write_report(TARGET.blueprint, FINDINGS, [issue["fix"]])
        assert "say nothing about on-time" not in retry and "On on-time: on time rate pct 91.9 (scorecard)." in retry
        assert codes(retry) == []

    def test_a_true_absence_claim_passes(self):
        report = GOOD.replace("On on-time: on time rate pct 91.9 (scorecard).",
                              "On on-time: 91.9. The findings say nothing about lead times or payment terms.")
        assert codes(report) == []

    def test_the_offline_writer_never_claims_absence_of_what_a_finding_names(self):
        report = write_report(TARGET.blueprint, FINDINGS, [directives.make("keyword", "defect rate")])
        assert "say nothing about defect rate" not in report and "defect rate ppm 420" in report


class TestNumbers:
    def test_an_unsupported_number_fails_with_a_ground_fix(self):
        report = GOOD.replace("(+14.8%)", "(+14.8%). The supplier's on-time rate was 87.5% a year earlier")
        (issue,) = issues_of(report, "unsupported_number")
        assert "87.5" in issue["message"] and issue["fix"]["kind"] == "ground"

    def test_a_derived_number_passes_only_beside_its_operands(self):
        assert issues_of(GOOD, "unsupported_number") == []  # "+14.8%" beside 41.2 and 47.3
        alone = GOOD.replace("## Recommendation", "Prices rose 14.8% in all.\n\n## Recommendation")
        assert [i["message"].split(" (")[0] for i in issues_of(alone, "unsupported_number")] == ["the number 14.8%"]

    def test_counts_dates_thresholds_and_rounded_figures_pass(self):
        extra = ("The incidents research holds 4 row(s); 2 of 4 rows are high. The contract ends 2027-03-31. "
                 "Rule 2's limit is 85. Spend was 3,850 keur.")
        assert codes(GOOD.replace("## Prices", extra + "\n\n## Prices")) == []
        wrong_date = GOOD.replace("## Prices", "The contract ends 2029-03-31.\n\n## Prices")
        assert codes(wrong_date) == ["unsupported_number"]


class TestEchoedKeyword:
    def test_a_keyword_found_only_in_the_goal_echo_does_not_count_and_the_retry_mentions_it(self):
        """'renew' was found only because the goal's text is echoed at the top."""
        blueprint = TARGET.blueprint.model_copy(update={"decision": None})
        first = write_report(blueprint, FINDINGS, [])
        assert "renew" in first.lower() and blueprint.goal in first  # only the echo holds it
        (issue,) = [i for i in builtin_issues(first, blueprint, FINDINGS) if i["code"] == "missing_keyword"
                    and "'renew'" in i["message"]]
        retry = write_report(blueprint, FINDINGS, [issue["fix"]])
        assert "missing_keyword" not in [i["code"] for i in builtin_issues(retry, blueprint, FINDINGS)
                                         if "'renew'" in i["message"]]


class TestDecision:
    def test_the_rules_choose_from_the_findings(self):
        chosen = decide(TARGET.blueprint.decision, FINDINGS)
        assert (chosen.choice, chosen.rule) == ("renew with conditions", 3)
        worse = [{**f, "value": {**f["value"], "on_time_rate_pct": 80}} if f["tool"] == "scorecard" else f
                 for f in FINDINGS]
        assert decide(TARGET.blueprint.decision, worse).choice == "do not renew"
        clean = [{**f, "value": {"high": 0}} if f["tool"] == "severity" else
                 {**f, "value": {**f["value"], "on_time_rate_pct": 98}} if f["tool"] == "scorecard" else
                 {**f, "value": [r for r in f["value"] if r["severity"] != "high"]} if f["tool"] == "incidents" else f
                 for f in FINDINGS]
        assert (decide(TARGET.blueprint.decision, clean).choice, decide(TARGET.blueprint.decision, clean).rule) == \
            ("renew", None)

    def test_a_report_recommending_another_option_fails_with_a_decide_fix(self):
        report = GOOD.replace("Recommendation: **renew with conditions**.", "We recommend: **renew**.")
        (issue,) = issues_of(report, "decision")
        assert issue["fix"] == directives.make("decide", "renew with conditions")
        assert recommended("We recommend to do not renew.", TARGET.blueprint.decision.options) == ["do not renew"]

    def test_without_a_decision_the_writer_says_which_findings_would_decide(self):
        blueprint = TARGET.blueprint.model_copy(update={"decision": None})
        report = write_report(blueprint, FINDINGS, [])
        section = report.split("## Recommendation", 1)[1]
        assert "recommends no option of its own" in section and "on time rate pct 91.9" in section
        assert "incidents (4 rows)" in section and "draws no conclusion" not in section


class TestLLMWriter:
    def test_a_false_report_fails_each_rule_and_the_retry_following_the_fixes_passes(self, server: OpenAIServer,
                                                                                    client, tmp_path: Path):
        """The model's first report claims an absence, invents a figure, echoes 'renew' only and recommends
        nothing; QA fails it on each rule; the retry's prompt carries each fix; the second report passes."""
        blueprint = TARGET.blueprint
        bad = GOOD.replace("On on-time: on time rate pct 91.9 (scorecard).",
                           "The research findings say nothing about on-time. Defects fell by 37% this year.")
        bad = bad.split("## Recommendation")[0] + "## Recommendation\n\nThe committee decides.\n"
        server.push(Reply(f"```markdown\n{bad}```"), Reply(f"```markdown\n{GOOD}```"),
                    Reply('```json\n{"passed": true, "feedback": ""}\n```'))
        context = BlueprintContext(run_id="llm", target=EXAMPLE, blueprint=blueprint, data=TARGET.data,
                                   sandbox=sandbox(), image="img", limits=SandboxLimits(), max_attempts=3,
                                   artefacts=RunArtefacts(tmp_path / "runs" / "llm"),
                                   roles=LLMRoles(client, tmp_path / "blueprints"))
        summary = run_blueprint_agent(context, on_event=lambda _e: None)
        assert summary.status == "passed" and summary.attempts == 2
        first = json.loads((tmp_path / "runs" / "llm" / "attempts" / "1" / "qa.json").read_text())
        assert {i["code"] for i in first["issues"]} >= {"false_absence", "unsupported_number", "decision"}
        first_prompt = server.chat_requests[0].body["messages"][-1]["content"]
        assert "In the section 'Recommendation':" in first_prompt and "**renew with conditions**" in first_prompt
        retry_prompt = server.chat_requests[1].body["messages"][-1]["content"]
        assert "cite: state what the findings hold on 'on-time'" in retry_prompt
        assert "ground: use only figures the findings hold" in retry_prompt and "'37%'" in retry_prompt
        assert "decide: recommend 'renew with conditions'" in retry_prompt


def test_a_cell_is_cut_at_a_words_end_never_inside_a_word():
    text = "Batch of brake calipers recalled and replaced after an audit found porous castings"
    cut = _cell(text, 40)
    assert cut == "Batch of brake calipers recalled and…" and len(cut) <= 40


def test_the_example_passes_through_the_loop_with_a_recommendation(tmp_path: Path):
    """supplier-review, offline: attempt 1 lacks 'on-time' (only the decision's own words hold it); the
    retry states the finding instead of claiming the findings say nothing; the report recommends."""
    cfg = target(tmp_path, EXAMPLE)
    summary, run_dir = run(cfg, EXAMPLE, sandbox())
    assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["missing_keyword"]
    report = (run_dir / "report.md").read_text()
    assert "Recommendation: **renew with conditions**." in report and "say nothing about on-time" not in report
    assert "On on-time: on time rate pct 91.9 (scorecard)." in report


def test_a_huge_hostile_report_is_judged_in_bounded_time():
    """A model's report is untrusted: 100,000 characters of figures against large findings stay fast."""
    import time

    rows = [{"n": str(i), "v": f"{i * 1.5:.1f}"} for i in range(5000)]
    findings = [*FINDINGS, Finding(tool="big", ok=True, value=rows, error="", sandboxed=False, seconds=0.0)]
    report = "# T\n\n## Scorecard\n\n" + " ".join(f"{i}.{i % 10}" for i in range(20_000))[:100_000] + "\n"
    started = time.monotonic()
    issues = [i for i in builtin_issues(report, TARGET.blueprint, findings) if i["code"] == "unsupported_number"]
    assert time.monotonic() - started < 5 and len(issues) == 5
