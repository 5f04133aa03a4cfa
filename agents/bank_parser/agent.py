"""The bank-statement parser agent (seeds 000/001) behind the one agent interface
(:class:`agents.base.Agent`): what ``controller`` needs to run, check, resume, replay and
draw it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.bank_parser.checking import check_many, print_report, verdicts
from agents.bank_parser.coders import check_coder, make_coder
from agents.bank_parser.coders.base import FailureKind
from agents.bank_parser.evaluate import (
    IMAGE_NAME,
    PARSER_FILE,
    RESULT_FILE,
    execute_parser,
    parser_spec,
    restore_execution,
)
from agents.bank_parser.graph import build_graph
from agents.bank_parser.nodes import AGENT
from agents.bank_parser.output_schema import OutputSchema
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.state import ParserState
from agents.bank_parser.submission_check import check_submissions_command
from agents.bank_parser.submissions import Submission, find_submissions
from agents.bank_parser.target import resolve_target
from agents.bank_parser.target_env import judge_image
from agents.base import AgentInfo
from agents.lessons import open_lessons
from agents.ports.config import AgentConfig
from agents.ports.errors import TargetError, invalid_setting
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckContext, CheckRequest, Plan, ReplayOutcome, RunContext
from agents.ports.sandbox import SandboxLimits, SandboxSpec
from agents.targets import TARGET_FILE, TargetConfig, collect_files, invalid_target_file, load_target_config

#: Attempts when neither --max-attempts, target.toml nor SBX_MAX_ATTEMPTS says otherwise.
DEFAULT_MAX_ATTEMPTS = 3


class BankParserAgent:
    """Writes ``parse(pdf_path) -> DataFrame`` for a bank statement until it equals result.csv."""

    name = AGENT
    info = AgentInfo(
        target_kinds=("bank_statement",), artefact="parser", images=(IMAGE_NAME,),
        # The state schema, and the restorer of an execution (its frame is decoded again).
        state_types=(ParserState, restore_execution),
        nodes=tuple(name for name in build_graph(1).nodes if not name.startswith("__")),
        failure_reasons=tuple(kind.value for kind in FailureKind),
        sample=lambda image, limits, labels: parser_spec(
            image, "def parse(pdf_path): ...\n", b"%PDF-1.7 placeholder\n", limits, dict(labels)),
    )

    def plan(self, target: str, config: AgentConfig, max_attempts: int | None) -> Plan:
        """The target (PDF, result.csv), the attempt limit and the coder, checked before any engine call."""
        toml = load_target_config(config.data_dir, target)
        if max_attempts is None and toml is not None:
            max_attempts = toml.limits.max_attempts
        output = output_schema(config, target, toml)
        resolved = resolve_target(target, config.data_dir, config.analysis)
        history = open_lessons(config)
        coder = make_coder(config, lessons=history.lessons(AGENT, resolved.name))
        coder_line = check_coder(coder)  # an LLM's key, endpoint and model: exit 2 before anything starts
        environment = toml.environment if toml is not None else None
        limits = config.limits
        return Plan(
            agent=AGENT, target=resolved.name, max_attempts=max_attempts or config.max_attempts or DEFAULT_MAX_ATTEMPTS,
            limits=limits, coder=coder, coder_name=coder.name, banner=f"({resolved.pdf.name})", image=IMAGE_NAME,
            environment=environment.declared() if environment is not None else None,
            environment_as_of=environment.as_of if environment is not None else None,
            prewarm=lambda image: warm_spec(image, limits),
            notes=(coder_line,) if coder_line else (),
            record={"input_sha256": _sha(resolved.pdf.read_bytes())},
            inputs={"target": resolved, "history": history, "output": output},
        )

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """analyze → generate → save → execute → compare → refine … → finalize."""
        return build_graph(max_attempts, checkpointer)

    def run(self, plan: Plan, ctx: RunContext) -> RunSummary:
        """Stream the graph (see :func:`agents.bank_parser.run.run_parser_agent`)."""
        return run_parser_agent(
            run_id=ctx.run_id, target=plan.inputs["target"], artefacts=ctx.artefacts, limits=plan.limits,
            max_attempts=plan.max_attempts, parsers_dir=ctx.config.parsers_dir, output=plan.inputs["output"],
            sandbox=ctx.sandbox, image=ctx.image, coder=plan.coder, on_event=ctx.on_event,
            history=plan.inputs["history"], checkpoint=ctx.checkpoint,
            judge_image=judge_image(ctx.environment, ctx.say), analysis=ctx.config.analysis,
            cache_dir=ctx.config.runs_dir,
        )

    def check(self, request: CheckRequest, ctx: CheckContext) -> int:
        """Run existing parsers through the sandbox and the comparison; exit 0 all pass, 1 otherwise."""
        config = ctx.config
        target = resolve_target(request.target, config.data_dir, config.analysis)
        submissions = find_submissions(request.paths, target.name)  # folders with their own environment
        toml = load_target_config(config.data_dir, target.name)
        if submissions is None and toml is not None and toml.environment is not None:
            # issue 13: plain parsers of a target with [environment] run (and are judged) in it
            submissions = [Submission(p.name, p.parent, p, toml.environment.declared(), None)
                           for p in collect_files(request.paths, ".py", "parser")]
            as_of = request.options.get("as_of") or toml.environment.as_of
            return check_submissions_command(as_of, request.jobs, ctx, target, submissions)
        if submissions is not None:
            return check_submissions_command(request.options.get("as_of"), request.jobs, ctx, target, submissions)
        parsers = collect_files(request.paths, ".py", "parser")
        jobs = request.jobs or config.parallel_checks
        if len(parsers) > 1:
            ctx.say(f"checking {len(parsers)} parser(s) against {target.name}, {jobs} at a time")
        # Enough warm containers for every concurrent check to find one.
        with ctx.open_session(min(jobs, len(parsers))) as session:
            image = session.image(IMAGE_NAME)
            session.prewarm(warm_spec(image, config.limits))
            outcomes = check_many(session.sandbox, image, target, config, parsers, jobs, ctx.say)
        print_report(outcomes)
        ctx.record(verdicts(outcomes, request.paths))
        return 0 if all(o.status != "fail" for o in outcomes) else 1

    def replay(self, sandbox: Any, image: str, run_dir: Path, record: dict[str, Any], attempt: int) -> ReplayOutcome:
        """Run attempt ``attempt``'s parser on the target's PDF again, with the run's limits and image."""
        folder = run_dir / "attempts" / str(attempt)
        code_path, stored = folder / PARSER_FILE, folder / "sandbox.json"
        if not code_path.is_file() or not stored.is_file():
            raise TargetError(f"attempt {attempt} of run {record['run_id']} never ran a parser in the sandbox",
                              hint=f"see {folder}")
        target = resolve_target(record["target"], Path(record["data_dir"]))
        pdf = target.pdf.read_bytes()
        limits = SandboxLimits.model_validate(record["limits"])
        labels = {"run_id": record["run_id"], "agent": AGENT, "target": target.name, "attempt": f"replay-{attempt}"}
        spec = parser_spec(image, code_path.read_text(encoding="utf-8"), pdf, limits, labels)
        execution = execute_parser(sandbox, spec)
        result = execution.sandbox.files.get(RESULT_FILE)
        now = _facts(execution.sandbox.outcome, execution.failure.value if execution.failure else None,
                     execution.message, execution.sandbox.exit_code, result)
        recorded_result = folder / RESULT_FILE
        before = recorded_result.read_bytes() if recorded_result.is_file() else None
        recorded = _facts_of(json.loads(stored.read_text(encoding="utf-8")), before)
        notes = () if record.get("input_sha256") in (None, _sha(pdf)) else (
            f"the target's PDF changed since the run ({target.pdf})",)
        return ReplayOutcome(code_path, recorded, now, notes, _shown(before), _shown(result))


def warm_spec(image: str, limits: SandboxLimits) -> SandboxSpec:
    """An execution like every parser run (no code or PDF yet): what a warm container waits for."""
    return parser_spec(image, "", b"", limits, {})


def _facts(outcome: str, failure: str | None, message: str, exit_code: int | None,
           result: bytes | None) -> dict[str, Any]:
    """What defines an execution's outcome: how it ended, failure kind, message, the result's hash."""
    return {"outcome": outcome, "failure": failure, "message": message, "exit_code": exit_code,
            "result_sha256": _sha(result) if result is not None else None}


def _facts_of(stored: dict[str, Any], result: bytes | None) -> dict[str, Any]:
    """The same facts, from an attempt's sandbox.json and result.json."""
    return _facts(stored.get("outcome", ""), stored.get("failure"), stored.get("message", ""),
                  stored.get("exit_code"), result)


def _shown(result: bytes | None) -> str:
    """The (untrusted) result document as indented JSON text for a diff; JSON parsing only."""
    if result is None:
        return ""
    try:
        return json.dumps(json.loads(result), indent=1, sort_keys=True, ensure_ascii=False)
    except ValueError:
        return result.decode("utf-8", "replace")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def output_schema(config: AgentConfig, target: str, toml: TargetConfig | None) -> OutputSchema:
    """The frame to aim for without result.csv: target.toml's ``[output]``, else SBX_OUTPUT__* (issue 15).

    Raises:
        ConfigError: either does not validate (one line naming the key).
    """
    if toml is not None and toml.output is not None:
        try:
            return OutputSchema.model_validate(toml.output)
        except ValidationError as exc:
            raise invalid_target_file(config.data_dir / target / TARGET_FILE, exc, prefix="output") from exc
    try:
        return OutputSchema.model_validate(config.output)
    except ValidationError as exc:  # SBX_OUTPUT__*: the same line as any other setting's
        raise invalid_setting(exc, prefix="output") from exc
