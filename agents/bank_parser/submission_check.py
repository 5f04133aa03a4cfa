"""``controller check`` of submissions: each in its own declared environment, judged there.

Two phases. First every submission's environment is provided, one at a time (resolution and
builds are heavy, and equal sets must be built once): built, reused or failed, timed apart.
Then the parsers run, ``jobs`` at a time, each in a fresh container of its environment with
its modules, and each result is judged in a second container of the same environment.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from agents.bank_parser.env_judge import Verdict, judge_in_environment, judge_spec
from agents.bank_parser.evaluate import (
    IMAGE_NAME,
    RESULT_FILE,
    Execution,
    execute_parser,
    parser_spec,
)
from agents.bank_parser.submissions import ARCHIVE_NAME, Submission, module_archive
from agents.bank_parser.target import Target
from agents.ports.config import AgentConfig
from agents.ports.environments import Environment, EnvironmentProvider, parse_as_of
from agents.ports.errors import UsageError
from agents.ports.events import Say
from agents.ports.run import CheckContext, CheckVerdict, Session
from agents.ports.sandbox import Sandbox

FIRST_DIFF_WIDTH = 60


@dataclass(frozen=True)
class SubmissionOutcome:
    """One submission's verdict, its environment, and the time its run took."""

    submission: Submission
    status: str  # pass | fail | unverified
    environment: Environment | None
    execution: Execution | None = None
    verdict: Verdict | None = None
    problem: str = ""

    @property
    def run_seconds(self) -> float:
        """Seconds in sandboxes: the parser's run plus the judge's."""
        run = self.execution.sandbox.wall_seconds if self.execution else 0.0
        return run + (self.verdict.seconds if self.verdict else 0.0)

    @property
    def rows(self) -> str:
        """Rows returned, or '-'."""
        frame = self.execution.frame if self.execution else None
        return "-" if frame is None else str(len(frame))

    @property
    def first_difference(self) -> str:
        """The first thing wrong, in a few words."""
        if self.problem:
            return self.problem
        if self.execution is not None and self.execution.failure is not None:
            return f"{self.execution.failure.value}: {self.execution.message}"
        return "" if self.verdict is None or self.verdict.passed else self.verdict.first_difference


def check_submissions(session: Session, base_image: str, target: Target, settings: AgentConfig,
                      submissions: list[Submission], jobs: int, say: Say,
                      as_of: str | None) -> list[SubmissionOutcome]:
    """Provide every environment, then run and judge every submission; outcomes in order."""
    provisioner = session.environments(base_image)
    environments: dict[str, Environment | None] = {}
    for number, submission in enumerate(submissions, start=1):
        environments[submission.name] = _environment(provisioner, submission, as_of)
        env = environments[submission.name]
        if env is not None:
            say(f"[env {number}/{len(submissions)}] {submission.name}: {env.status} "
                         f"{env.short_tag} ({env.seconds:.1f}s){' ' + env.error if env.error else ''}")
    expected = target.expected_csv.read_bytes() if target.expected_csv else None
    pdf = target.pdf.read_bytes()
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="sandloop-submission") as pool:
        futures = [pool.submit(run_submission, session.sandbox, s, environments[s.name], pdf, expected, settings,
                               target.name)
                   for s in submissions]
        outcomes = []
        for number, future in enumerate(futures, start=1):
            outcome = future.result()
            outcomes.append(outcome)
            say(f"[{number}/{len(submissions)}] {outcome.status.upper():<10} {outcome.submission.name} "
                         f"({outcome.run_seconds:.2f}s)")
    return outcomes


def _environment(provisioner: EnvironmentProvider, submission: Submission, as_of: str | None) -> Environment | None:
    if submission.parser is None:
        return None
    return provisioner.provide(submission.declared, as_of or submission.commit_date)


def run_submission(sandbox: Sandbox, submission: Submission, env: Environment | None, pdf: bytes,
                   expected: bytes | None, settings: AgentConfig, target: str) -> SubmissionOutcome:
    """Run one submission's parser in its environment, then judge the result there."""
    if submission.parser is None:
        return SubmissionOutcome(submission, "fail", env, problem=f"no parser: {submission.problem}")
    if env is None or env.tag is None:
        return SubmissionOutcome(submission, "fail", env, problem=f"environment: {env.error if env else '?'}")
    try:
        code = submission.parser.read_text(encoding="utf-8")
        archive = module_archive(submission)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return SubmissionOutcome(submission, "fail", env, problem=f"unreadable: {exc}"[:200])
    labels = {"agent": "check", "target": target}
    spec = parser_spec(env.tag, code, pdf, settings.limits, labels)
    spec = dataclasses.replace(spec, inputs={**spec.inputs, ARCHIVE_NAME: archive}, warm_command=None)
    execution = execute_parser(sandbox, spec)
    if execution.failure is not None or execution.frame is None:
        return SubmissionOutcome(submission, "fail", env, execution)
    if expected is None:
        return SubmissionOutcome(submission, "unverified", env, execution)
    verdict = judge_in_environment(sandbox, judge_spec(
        env.tag, execution.sandbox.files[RESULT_FILE], expected, settings.limits, labels))
    return SubmissionOutcome(submission, "pass" if verdict.passed else "fail", env, execution, verdict)


def print_submission_report(outcomes: list[SubmissionOutcome], as_of: str | None) -> None:
    """The table (environment tag, built/reused, build and run time), the totals, the count."""
    width = max(len("submission"), *(len(o.submission.name) for o in outcomes))
    print(f"\n{'submission':<{width}}  {'outcome':<10} {'rows':>5} {'env tag':<12} {'env':<7} "
          f"{'build':>7} {'run':>7}  first difference")
    for o in outcomes:
        env = o.environment
        diff = o.first_difference
        diff = diff if len(diff) <= FIRST_DIFF_WIDTH else diff[: FIRST_DIFF_WIDTH - 1] + "…"
        print(f"{o.submission.name:<{width}}  {o.status:<10} {o.rows:>5} {env.short_tag if env else '-':<12} "
              f"{env.status if env else '-':<7} {env.seconds if env else 0.0:6.1f}s {o.run_seconds:6.2f}s  {diff}")
    envs = [o.environment for o in outcomes if o.environment is not None]
    built = sum(e.status == "built" for e in envs)
    reused = sum(e.status == "reused" for e in envs)
    failed = sum(e.status == "failed" for e in envs)
    print(f"environments: {built} built, {reused} reused, {failed} failed"
          f"{f' (as of {as_of})' if as_of else ''}; building {sum(e.seconds for e in envs):.1f}s, "
          f"running {sum(o.run_seconds for o in outcomes):.1f}s")
    passed = sum(o.status == "pass" for o in outcomes)
    fails = sum(o.status == "fail" for o in outcomes)
    unverified = len(outcomes) - passed - fails
    print(f"{passed} passed, {fails} failed" + (f", {unverified} unverified" if unverified else ""))


def check_submissions_command(as_of_text: str | None, jobs: int | None, ctx: CheckContext, target: Target,
                              submissions: list[Submission]) -> int:
    """``controller check`` when submissions were given: exit 0 if none failed, else 1."""
    try:
        as_of = parse_as_of(as_of_text) if as_of_text else None
    except ValueError as exc:
        raise UsageError(str(exc), hint="give --as-of as YYYY-MM-DD") from exc
    workers = jobs or ctx.config.parallel_checks
    ctx.say(f"checking {len(submissions)} submission(s) against {target.name}, {workers} at a time"
            + (f", packages as of {as_of}" if as_of else ""))
    with ctx.open_session(1) as session:
        base = session.image(IMAGE_NAME)
        started = time.monotonic()
        outcomes = check_submissions(session, base, target, ctx.config, submissions, workers, ctx.say, as_of)
        ctx.say(f"done in {time.monotonic() - started:.1f}s")
    print_submission_report(outcomes, as_of)
    ctx.record([CheckVerdict(o.submission.name, o.status, None if o.rows == "-" else int(o.rows),
                             round(o.run_seconds, 3), o.first_difference) for o in outcomes])
    return 0 if all(o.status != "fail" for o in outcomes) else 1
