"""The bank-statement parser agent (seeds 000/001) behind the one agent interface
(:class:`agents.base.Agent`): what ``controller`` needs to run, check, resume, replay and
draw it. The bodies come from the former ``controller/commands.py`` (run, check)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agents.bank_parser.checking import check_many, collect_parsers, print_report
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
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.state import ParserState
from agents.bank_parser.submission_check import check_submissions_command
from agents.bank_parser.submissions import Submission, find_submissions
from agents.bank_parser.target_env import provide_target_environment, resumed_judge_image
from agents.base import CheckRequest, ReplayOutcome, RunPlan
from agents.lessons import LESSONS_FILE, ExecutionHistory
from agents.loop import OnEvent
from controller.errors import TargetError
from controller.progress import Progress
from controller.report import RunSummary
from controller.services import Services
from controller.settings import SandboxLimits, Settings
from controller.target_config import load_target_config
from controller.targets import resolve_target


class BankParserAgent:
    """Writes ``parse(pdf_path) -> DataFrame`` for a bank statement until it equals result.csv."""

    name = AGENT
    target_kinds = ("bank_statement",)
    artefact = "parser"
    images = (IMAGE_NAME,)

    def plan(self, target: str, settings: Settings, max_attempts: int | None) -> RunPlan:
        """The target (PDF, result.csv), the attempt limit and the coder, checked before any engine call."""
        config = load_target_config(settings.data_dir, target)
        if max_attempts is None and config is not None and config.limits.max_attempts is not None:
            max_attempts = config.limits.max_attempts
        if config is not None and config.output is not None:  # issue 15: [output] of target.toml
            settings = settings.model_copy(update={"output": config.output})
        resolved = resolve_target(target, settings.data_dir)
        history = ExecutionHistory(settings.runs_dir / LESSONS_FILE)
        coder = make_coder(settings, lessons=history.lessons(AGENT, resolved.name))
        coder_line = check_coder(coder)  # an LLM's key, endpoint and model: exit 2 before anything starts
        return RunPlan(
            agent=AGENT, target=resolved.name, max_attempts=max_attempts or settings.max_attempts,
            limits=settings.sandbox, coder=coder, coder_name=coder.name,
            banner=f"({resolved.pdf.name})", notes=(coder_line,) if coder_line else (),
            inputs={"target": resolved, "history": history, "output": settings.output,
                    "environment": config.environment if config is not None else None},
        )

    def ensure_image(self, services: Services, name: str, say: Any) -> str:
        """The python-parser image (a content-hash tag), built if the engine lacks it."""
        return services.image(name)

    def run_image(self, services: Services, image: str, plan: RunPlan, say: Any) -> str:
        """The target's own environment image (``[environment]`` of target.toml, issue 13), else ``image``."""
        environment = plan.inputs.get("environment")
        if environment is None:
            return image
        provided = provide_target_environment(services, image, environment, say)
        plan.inputs["judge_image"] = provided.judge_image
        return provided.tag

    def prewarm(self, services: Services, image: str, plan: RunPlan) -> None:
        """A warm container, ready by the first execute."""
        if plan.inputs.get("environment") is not None and "judge_image" not in plan.inputs:
            plan.inputs["judge_image"] = resumed_judge_image(image)  # run --resume: the recorded image
        services.prewarm(parser_spec(image, "", b"", plan.limits, {}))

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """analyze → generate → save → execute → compare → refine … → finalize."""
        return build_graph(max_attempts, checkpointer)

    def run(self, plan: RunPlan, *, run_id: str, settings: Settings, sandbox: Any, image: str,
            on_event: OnEvent, checkpoint: Any) -> RunSummary:
        """Stream the graph (see :func:`agents.bank_parser.run.run_parser_agent`)."""
        run_settings = settings.model_copy(update={"max_attempts": plan.max_attempts, "sandbox": plan.limits,
                                                   "output": plan.inputs.get("output", settings.output)})
        return run_parser_agent(
            run_id=run_id, target=plan.inputs["target"], settings=run_settings, sandbox=sandbox, image=image,
            coder=plan.coder, on_event=on_event, history=plan.inputs["history"], checkpoint=checkpoint,
            judge_image=plan.inputs.get("judge_image"),
        )

    def checkpoint_types(self) -> tuple[Any, ...]:
        """The state schema, and the restorer of an execution (its frame is decoded again)."""
        return (ParserState, restore_execution)

    def check(self, request: CheckRequest, settings: Settings, progress: Progress) -> int:
        """Run existing parsers through the sandbox and the comparison; exit 0 all pass, 1 otherwise."""
        target = resolve_target(request.target, settings.data_dir)
        submissions = find_submissions(request.paths, target.name)  # folders with their own environment
        config = load_target_config(settings.data_dir, target.name)
        if submissions is None and config is not None and config.environment is not None:
            # issue 13: plain parsers of a target with [environment] run (and are judged) in it
            submissions = [Submission(p.name, p.parent, p, config.environment.declared(), None)
                           for p in collect_parsers(request.paths)]
            as_of = request.options.get("as_of") or config.environment.as_of
            return check_submissions_command(as_of, request.jobs, settings, target, submissions)
        if submissions is not None:
            return check_submissions_command(request.options.get("as_of"), request.jobs, settings, target, submissions)
        parsers = collect_parsers(request.paths)
        jobs = request.jobs or settings.parallel_checks
        if len(parsers) > 1:
            progress.say(f"checking {len(parsers)} parser(s) against {target.name}, {jobs} at a time")
        # Enough warm containers for every concurrent check to find one.
        pool = settings.pool.model_copy(update={"size": max(settings.pool.size, min(jobs, len(parsers)))})
        services = Services.start(settings.model_copy(update={"pool": pool}), progress.say)
        try:
            image = services.image(IMAGE_NAME)
            services.prewarm(parser_spec(image, "", b"", settings.sandbox, {}))
            outcomes = check_many(services.sandbox, image, target, settings, parsers, jobs, progress)
        finally:
            services.close()
        print_report(outcomes)
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

    def known_nodes(self) -> tuple[str, ...]:
        """The graph's nodes."""
        return tuple(name for name in build_graph(1).nodes if not name.startswith("__"))

    def failure_reasons(self) -> tuple[str, ...]:
        """The failure kinds of an attempt."""
        return tuple(kind.value for kind in FailureKind)

    def plan_record(self, plan: RunPlan) -> dict[str, Any]:
        """What a replay needs besides the common record: a hash of the PDF (to tell when it changed)."""
        return {"input_sha256": _sha(plan.inputs["target"].pdf.read_bytes())}


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
