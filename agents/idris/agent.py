"""The Idris2 domain-model agent (seed 004) behind the one agent interface
(:class:`agents.base.Agent`).

Order matters for the user: the target, the document, the limits and the coder are
checked first (:meth:`IdrisAgent.plan`: a mistake there is one line and exit 2, before any
engine call); then the engine, then the image (which may refuse in seconds, see
:mod:`controller.platform.images.idris`); only then does a run folder appear.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agents.base import AgentInfo
from agents.idris.checking import check_modules, print_module_report
from agents.idris.coder import IdrisCoder, OfflineIdrisCoder
from agents.idris.document import check_document, load_document
from agents.idris.document_reader import SandboxPdfText
from agents.idris.graph import build_graph
from agents.idris.nodes import AGENT, CHECK_FILE, TRANSCRIPT_FILE
from agents.idris.run import IDRIS_REASONS, IdrisRunRequest, run_idris_agent
from agents.idris.state import IdrisState
from agents.idris.typecheck import IMAGE_NAME, check_spec, module_file, run_check
from agents.ports.config import AgentConfig
from agents.ports.errors import TargetError
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckContext, CheckRequest, Plan, ReplayOutcome, RunContext
from agents.ports.sandbox import Sandbox, SandboxLimits
from agents.python_program import IMAGE_NAME as PDF_IMAGE
from agents.targets import TargetConfig, agent_target_config, collect_files, resolve_document_target, target_limits

#: The seed's limit of checks (compile attempts) when nothing else says otherwise.
DEFAULT_MAX_ATTEMPTS = 5
#: Memory for one idris2 --check unless SBX_SANDBOX__MEMORY_MB or target.toml says otherwise.
DEFAULT_MEMORY_MB = 1536


class IdrisAgent:
    """Turns a reference document into an Idris2 module whose invariants are types."""

    name = AGENT
    info = AgentInfo(
        target_kinds=("document",), artefact="module", images=(IMAGE_NAME, PDF_IMAGE), state_types=(IdrisState,),
        nodes=tuple(name for name in build_graph(1).nodes if not name.startswith("__")),
        failure_reasons=IDRIS_REASONS,
    )

    def plan(self, target: str, config: AgentConfig, max_attempts: int | None) -> Plan:
        """The target.toml, the document, the limits and the coder, checked before any engine call."""
        toml = agent_target_config(config.data_dir, target, AGENT)
        resolved = resolve_document_target(target, config.data_dir, toml)
        check_document(resolved.document)  # kind and header now; a PDF's text is read in a sandbox by run
        attempts = idris_max_attempts(config, toml, max_attempts)
        coder = make_idris_coder(config)
        return Plan(
            agent=AGENT, target=resolved.name, max_attempts=attempts, limits=idris_limits(config, toml),
            coder=coder, coder_name=coder.name, banner=f"({resolved.document.name} → Domains.{toml.project})",
            image=IMAGE_NAME,  # no prewarm: an idris2 check has no warm form
            record={"project": str(toml.project)}, inputs={"config": toml, "document": resolved.document},
        )

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """analyze → generate → save → typecheck → finish | fail | fix → save …"""
        return build_graph(max_attempts, checkpointer)

    def run(self, plan: Plan, ctx: RunContext) -> RunSummary:
        """Stream the graph (see :func:`agents.idris.run.run_idris_agent`)."""
        toml = plan.inputs["config"]
        labels = {"run_id": ctx.run_id, "agent": AGENT, "target": plan.target, "attempt": "analysis"}
        reader = SandboxPdfText(ctx.sandbox, ctx.image_of, ctx.config.limits, ctx.config.analysis, labels)
        request = IdrisRunRequest(
            run_id=ctx.run_id, target=plan.target, project=str(toml.project), document_type=toml.document_type,
            document=load_document(plan.inputs["document"], reader), limits=plan.limits, max_attempts=plan.max_attempts,
            artefacts=ctx.artefacts, output_dir=ctx.config.idris_dir,
        )
        return run_idris_agent(request, sandbox=ctx.sandbox, image=ctx.image, coder=plan.coder,
                               on_event=ctx.on_event, checkpoint=ctx.checkpoint)

    def check(self, request: CheckRequest, ctx: CheckContext) -> int:
        """Type-check hand-written modules; exit 0 when all check, 1 otherwise."""
        toml = agent_target_config(ctx.config.data_dir, request.target, AGENT)
        modules = collect_files(request.paths, ".idr", "module")
        with ctx.open_session(1) as session:
            image = session.image(IMAGE_NAME)
            outcomes = check_modules(session.sandbox, image, idris_limits(ctx.config, toml), request.target,
                                     modules, ctx.say)
        print_module_report(outcomes)
        return 0 if all(o.passed for o in outcomes) else 1

    def replay(self, sandbox: Sandbox, image: str, run_dir: Path, record: dict[str, Any],
               attempt: int) -> ReplayOutcome:
        """Check attempt ``attempt``'s module again, with the run's limits and image."""
        folder = run_dir / "attempts" / str(attempt)
        module = f"Domains.{record['project']}"
        source_path, stored = folder / module_file(module), folder / CHECK_FILE
        if not source_path.is_file() or not stored.is_file():
            raise TargetError(f"attempt {attempt} of run {record['run_id']} never checked a module",
                              hint=f"see {folder}")
        limits = SandboxLimits.model_validate(record["limits"])
        labels = {"run_id": record["run_id"], "agent": AGENT, "target": record["target"],
                  "attempt": f"replay-{attempt}"}
        check = run_check(sandbox, check_spec(image, module, source_path.read_text(encoding="utf-8"), limits, labels))
        before = json.loads(stored.read_text(encoding="utf-8"))
        transcript = folder / TRANSCRIPT_FILE
        old_text = transcript.read_text(encoding="utf-8") if transcript.is_file() else ""
        recorded = _facts(before.get("outcome", ""), before.get("message", ""), before.get("exit_code"), old_text)
        replayed = _facts(check.outcome, check.message, check.sandbox.exit_code, check.transcript)
        return ReplayOutcome(source_path, recorded, replayed, (), old_text, check.transcript)


def _facts(outcome: str, message: str, exit_code: int | None, transcript: str) -> dict[str, Any]:
    return {"outcome": outcome, "message": message, "exit_code": exit_code,
            "transcript_sha256": hashlib.sha256(transcript.encode("utf-8")).hexdigest()}


def idris_limits(settings: AgentConfig, config: TargetConfig) -> SandboxLimits:
    """The sandbox limits of each check: target.toml, else SBX_SANDBOX__*, else the agent's defaults.

    The timeout's default is the settings' (30 s, the seed's); memory defaults to
    :data:`DEFAULT_MEMORY_MB` because Idris2 on Chez needs more than a parser does.
    """
    return target_limits(settings.limits, config.limits, {"memory_mb": DEFAULT_MEMORY_MB})


def idris_max_attempts(settings: AgentConfig, config: TargetConfig, cli_value: int | None) -> int:
    """``--max-attempts``, else target.toml, else SBX_MAX_ATTEMPTS if set, else 5 (the seed's)."""
    if cli_value is not None:
        return cli_value
    if config.limits.max_attempts is not None:
        return config.limits.max_attempts
    return settings.max_attempts or DEFAULT_MAX_ATTEMPTS  # None: SBX_MAX_ATTEMPTS unset


def make_idris_coder(settings: AgentConfig) -> IdrisCoder:
    """The coder for Idris modules: offline, or an LLM checked against its endpoint first.

    Raises:
        ConfigError: an LLM coder without its key, with a rejected key or an unknown model.
        LLMUnavailable: the LLM's endpoint does not answer.
    """
    if settings.coder == "offline":
        return OfflineIdrisCoder()
    from agents.idris.llm_coder import make_llm_idris_coder  # lazy: LLM client libraries, LLM coders only

    return make_llm_idris_coder(settings)
