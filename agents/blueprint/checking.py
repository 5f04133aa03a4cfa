"""``controller check --target NAME --report FILE...`` for the blueprint agent: judge stored
reports with the blueprint's QA (built-in checks in-process, its validators in sandboxes),
exactly as the loop's qa node does. The target's tools are researched once (QA's grounded rules
read the findings); nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.blueprint.checks import Verdict, judge
from agents.blueprint.loading import BlueprintTarget
from agents.blueprint.research import research
from agents.ports.errors import TargetError
from agents.ports.events import Say
from agents.ports.sandbox import Sandbox, SandboxLimits

MAX_REPORT_BYTES = 1 << 20


@dataclass(frozen=True)
class ReportCheck:
    """One stored report's verdict."""

    path: str
    verdict: Verdict


def read_report(path: Path) -> str:
    """A stored report as text, within its size cap.

    Raises:
        TargetError: unreadable, not UTF-8, or too big.
    """
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
        if len(raw) > MAX_REPORT_BYTES:
            raise TargetError(f"{path} is larger than {MAX_REPORT_BYTES >> 10} KiB")
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"cannot read {path} as UTF-8 text ({type(exc).__name__})") from exc


def check_reports(target: BlueprintTarget, paths: list[Path], sandbox: Sandbox, image: str, limits: SandboxLimits,
                  say: Say) -> list[ReportCheck]:
    """Judge every report; a progress line per report."""
    reports = {path: read_report(path) for path in paths}
    labels = {"agent": "check", "target": target.name}
    # QA's grounded rules read the findings: the target's tools, researched once as a run would
    findings = research(list(target.blueprint.tools), target.data, sandbox, image, limits, labels)
    outcomes = []
    for done, (path, report) in enumerate(reports.items(), start=1):
        verdict, _ = judge(report, target.blueprint, target.data, sandbox, image, limits, labels, findings)
        outcomes.append(ReportCheck(str(path), verdict))
        say(f"[{done}/{len(reports)}] {'PASS' if verdict['passed'] else 'FAIL'} {path}")
    return outcomes


def print_report_checks(outcomes: list[ReportCheck]) -> None:
    """Each report's verdict with its issues, then ``N passed, M failed``."""
    for outcome in outcomes:
        issues = outcome.verdict["issues"]
        print(f"{'PASS' if outcome.verdict['passed'] else 'FAIL'} {outcome.path}"
              f"{': ' + str(len(issues)) + ' issue(s)' if issues else ''}")
        for issue in issues[:8]:
            print(f"  {issue['code']}: {issue['message']}")
    passed = sum(o.verdict["passed"] for o in outcomes)
    print(f"{passed} passed, {len(outcomes) - passed} failed")
