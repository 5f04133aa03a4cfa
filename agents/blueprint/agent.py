"""The blueprint agent (seed 003) behind the one agent interface (:class:`agents.base.Agent`).

``plan`` reads and validates the target (target.toml, blueprint.json, the data files) and the
lessons of earlier runs of its workflow before any engine call: a mistake is one line, exit
2. ``run`` streams manager → researcher → manager → writer → qa → finish | writer | partial.
``check`` judges stored reports with the blueprint's QA; ``replay`` judges an attempt's report
again with the blueprint the run recorded (its validators in fresh sandboxes) and compares the
verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.base import AgentInfo, RunSections
from agents.blueprint.checking import check_reports, print_report_checks
from agents.blueprint.checks import REASONS, Verdict, judge
from agents.blueprint.editor import BlueprintEditor
from agents.blueprint.graph import NODES, build_graph
from agents.blueprint.loading import BlueprintTarget, load_target, read_data
from agents.blueprint.model import Blueprint
from agents.blueprint.nodes import AGENT, FINDINGS_FILE, REPORT_FILE, VERDICT_FILE
from agents.blueprint.research import Finding
from agents.blueprint.run import LESSONS_MD, run_blueprint_agent
from agents.blueprint.sandboxed import IMAGE_NAME, Call, call_spec
from agents.blueprint.state import BlueprintContext, BlueprintState
from agents.lessons import open_lessons
from agents.ports.config import AgentConfig
from agents.ports.errors import TargetError
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckContext, CheckRequest, Plan, ReplayOutcome, RunContext
from agents.ports.sandbox import Sandbox, SandboxLimits
from agents.targets import TargetConfig, agent_target_config, collect_files, target_limits

if TYPE_CHECKING:  # the LLM roles import the LLM client libraries; offline plans never load them
    from agents.blueprint.llm_roles import LLMRoles

#: The seed's two retries of the writer: three attempts.
DEFAULT_MAX_ATTEMPTS = 3
#: A tool or validator is a small function over small files: 10 s unless told otherwise.
DEFAULT_TIMEOUT_SECONDS = 10.0
SAMPLE_CODE = "def run(data):\n    return {}\n"


class BlueprintAgent:
    """Turns a blueprint into a report: research with its tools, write, QA, retry with feedback."""

    name = AGENT
    info = AgentInfo(
        target_kinds=("blueprint",), artefact="report", images=(IMAGE_NAME,), state_types=(BlueprintState,),
        nodes=NODES, failure_reasons=REASONS, editor=BlueprintEditor(),
        sections=RunSections(report=REPORT_FILE, verdicts=VERDICT_FILE, lessons=LESSONS_MD, steps=True),
        sample=lambda image, limits, labels: call_spec(image, Call("tool", "sample", SAMPLE_CODE, {}), limits,
                                                       dict(labels)),
    )

    def plan(self, target: str, config: AgentConfig, max_attempts: int | None) -> Plan:
        """target.toml, the blueprint, its data files and the target's lessons, before any engine call."""
        toml = agent_target_config(config.data_dir, target, AGENT)
        roles = llm_roles(config)
        loaded = load_target(config.data_dir, target, prose=roles.prose if roles is not None else None)
        history = open_lessons(config)
        lessons = tuple(history.lessons(AGENT, loaded.name))  # keyed by the target, as the run history is
        attempts = max_attempts or toml.limits.max_attempts or config.max_attempts or DEFAULT_MAX_ATTEMPTS
        notes = () if roles is None else (f"writer and QA review by {roles.name}; the researcher, the manager and "
                                          "QA's rules stay deterministic",)
        return Plan(
            agent=AGENT, target=loaded.name, max_attempts=attempts, limits=blueprint_limits(config, toml),
            coder=roles, coder_name=roles.name if roles is not None else "offline", image=IMAGE_NAME, notes=notes,
            banner=f"({loaded.blueprint.name}: {len(loaded.blueprint.tools)} tool(s), "
                   f"{len(loaded.blueprint.sections)} section(s), {len(lessons)} lesson(s))",
            record={"workflow": loaded.blueprint.name, "blueprint": loaded.blueprint.model_dump(mode="json")},
            inputs={"target": loaded, "history": history, "lessons": lessons},
        )

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """manager → researcher → manager → writer → qa → finish | writer | partial."""
        return build_graph(max_attempts, checkpointer)

    def run(self, plan: Plan, ctx: RunContext) -> RunSummary:
        """Stream the graph (see :func:`agents.blueprint.run.run_blueprint_agent`)."""
        loaded: BlueprintTarget = plan.inputs["target"]
        context = BlueprintContext(
            run_id=ctx.run_id, target=plan.target, blueprint=loaded.blueprint, data=loaded.data,
            sandbox=ctx.sandbox, image=ctx.image, limits=plan.limits, max_attempts=plan.max_attempts,
            artefacts=ctx.artefacts, lessons=plan.inputs["lessons"], roles=plan.coder,
        )
        return run_blueprint_agent(context, on_event=ctx.on_event, history=plan.inputs["history"],
                                   checkpoint=ctx.checkpoint)

    def check(self, request: CheckRequest, ctx: CheckContext) -> int:
        """Judge stored reports with the blueprint's QA; exit 0 when all pass, 1 otherwise."""
        toml = agent_target_config(ctx.config.data_dir, request.target, AGENT)
        roles = llm_roles(ctx.config)
        loaded = load_target(ctx.config.data_dir, request.target, prose=roles.prose if roles is not None else None)
        reports = collect_files(request.paths, ".md", "report")
        with ctx.open_session(0) as session:
            image = session.image(IMAGE_NAME) if loaded.blueprint.qa.validators else IMAGE_NAME
            outcomes = check_reports(loaded, reports, session.sandbox, image, blueprint_limits(ctx.config, toml),
                                     ctx.say)
        print_report_checks(outcomes)
        return 0 if all(o.verdict["passed"] for o in outcomes) else 1

    def replay(self, sandbox: Sandbox, image: str, run_dir: Path, record: dict[str, Any],
               attempt: int) -> ReplayOutcome:
        """Judge attempt ``attempt``'s report again (validators in fresh sandboxes) with the run's limits."""
        folder = run_dir / "attempts" / str(attempt)
        report_path, stored = folder / REPORT_FILE, folder / VERDICT_FILE
        if not report_path.is_file() or not stored.is_file():
            raise TargetError(f"attempt {attempt} of run {record['run_id']} has no judged report",
                              hint=f"see {folder}")
        blueprint = Blueprint.model_validate(record["blueprint"])  # as the run had it (prose needs no model again)
        folder = Path(record["data_dir"]) / record["target"]
        limits = SandboxLimits.model_validate(record["limits"])
        labels = {"run_id": record["run_id"], "agent": AGENT, "target": record["target"],
                  "attempt": f"replay-{attempt}"}
        verdict, _ = judge(report_path.read_text(encoding="utf-8"), blueprint,
                           read_data(folder, blueprint.data_files()),
                           sandbox, image, limits, labels, _recorded_findings(run_dir))
        recorded: Verdict = json.loads(stored.read_text(encoding="utf-8"))
        return ReplayOutcome(report_path, _facts(recorded), _facts(verdict))


def _recorded_findings(run_dir: Path) -> list[Finding]:
    """The findings the run researched (findings.json), which QA's grounded rules read.

    Raises:
        TargetError: the run has none (it never researched), or they are not a list.
    """
    try:
        findings = json.loads((run_dir / FINDINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"run {run_dir.name} has no readable {FINDINGS_FILE} ({type(exc).__name__})") from None
    if not isinstance(findings, list):
        raise TargetError(f"run {run_dir.name}'s {FINDINGS_FILE} is not a list of findings")
    return findings


def llm_roles(settings: AgentConfig) -> LLMRoles | None:
    """The configured LLM's writer, reviewer and prose parser, or None offline.

    Raises:
        ConfigError: no key, a rejected key, a model not served. LLMUnavailable: no endpoint.
    """
    if settings.coder == "offline":
        return None
    from agents.blueprint.llm_roles import make_llm_roles  # lazy: LLM client libraries, LLM coders only

    return make_llm_roles(settings)


def _facts(verdict: Verdict) -> dict[str, Any]:
    return {"passed": verdict["passed"], "issues": [f"{i['code']}: {i['message']}" for i in verdict["issues"]]}


def blueprint_limits(settings: AgentConfig, config: TargetConfig) -> SandboxLimits:
    """Each call's limits: target.toml, else SBX_SANDBOX__* if set, else a 10 s timeout."""
    return target_limits(settings.limits, config.limits, {"timeout_seconds": DEFAULT_TIMEOUT_SECONDS})
