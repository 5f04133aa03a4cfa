"""``python -m controller run --target NAME`` for a target whose ``target.toml`` says
``agent = "idris"``: everything from the target folder to the closing summary.

Order matters for the user: the target, the document, the limits and the coder are
checked first (a mistake there is one line and exit 2, before any engine call); then the
engine, then the image (which may refuse in seconds, see :mod:`agents.idris.image`); only
then does a run folder appear.
"""

from __future__ import annotations

import argparse

from agents.idris.coder import IdrisCoder, OfflineIdrisCoder
from agents.idris.document import load_document
from agents.idris.image import ensure_idris_image
from agents.idris.nodes import AGENT
from agents.idris.run import IdrisRunRequest, run_idris_agent
from agents.idris.state import NodeEvent
from controller.artifacts import new_run_id
from controller.observability.recorder import observe_run
from controller.progress import Progress
from controller.services import Services
from controller.settings import SandboxLimits, Settings
from controller.target_config import TargetConfig, resolve_document_target

#: The seed's limit of checks (compile attempts) when nothing else says otherwise.
DEFAULT_MAX_ATTEMPTS = 5
#: Memory for one idris2 --check unless SBX_SANDBOX__MEMORY_MB or target.toml says otherwise.
DEFAULT_MEMORY_MB = 1536


def run_idris(args: argparse.Namespace, settings: Settings, config: TargetConfig) -> int:
    """Run the Idris agent on ``args.target``; exit 0 type-checks, 1 gave up."""
    target = resolve_document_target(args.target, settings.data_dir, config)
    document = load_document(target.document)
    limits = idris_limits(settings, config)
    max_attempts = idris_max_attempts(settings, config, getattr(args, "max_attempts", None))
    coder = make_idris_coder(settings)
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        image = ensure_idris_image(services.client, settings, progress.say)
        run_id = new_run_id(target.name)
        progress.say(f"run {run_id}: {target.name} ({document.path.name} → Domains.{config.project}), "
                     f"up to {max_attempts} attempt(s)")
        request = IdrisRunRequest(
            run_id=run_id, target=target.name, project=str(config.project), document_type=config.document_type,
            document=document, limits=limits, max_attempts=max_attempts, runs_dir=settings.runs_dir,
            output_dir=settings.idris_dir,
        )
        observed = settings.model_copy(update={"max_attempts": max_attempts})
        with observe_run(observed, run_id=run_id, agent=AGENT, target=target.name, coder=coder.name,
                         sandbox=services.sandbox) as observer:

            def on_event(event: NodeEvent) -> None:
                progress.step(event.attempt, event.node, event.outcome, event.seconds, event.detail)
                observer.node(event.node, event.attempt, event.outcome, event.seconds)

            summary = run_idris_agent(request, sandbox=services.sandbox, image=image, coder=coder, on_event=on_event)
            observer.finish(summary)
    finally:
        services.close()
    progress.summary(summary)
    return summary.exit_code


def idris_limits(settings: Settings, config: TargetConfig) -> SandboxLimits:
    """The sandbox limits of each check: target.toml, else SBX_SANDBOX__*, else the agent's defaults.

    The timeout's default is the settings' (30 s, the seed's); memory defaults to
    :data:`DEFAULT_MEMORY_MB` because Idris2 on Chez needs more than a parser does.
    """
    update: dict[str, object] = {}
    if "memory_mb" not in settings.sandbox.model_fields_set:
        update["memory_mb"] = DEFAULT_MEMORY_MB
    for name in ("timeout_seconds", "memory_mb"):
        value = getattr(config.limits, name)
        if value is not None:
            update[name] = value
    return settings.sandbox.model_copy(update=update)


def idris_max_attempts(settings: Settings, config: TargetConfig, cli_value: int | None) -> int:
    """``--max-attempts``, else target.toml, else SBX_MAX_ATTEMPTS if set, else 5 (the seed's)."""
    if cli_value is not None:
        return cli_value
    if config.limits.max_attempts is not None:
        return config.limits.max_attempts
    if "max_attempts" in settings.model_fields_set:
        return settings.max_attempts
    return DEFAULT_MAX_ATTEMPTS


def make_idris_coder(settings: Settings) -> IdrisCoder:
    """The coder for Idris modules: offline, or an LLM checked against its endpoint first.

    Raises:
        ConfigError: an LLM coder without its key, with a rejected key or an unknown model.
        LLMUnavailable: the LLM's endpoint does not answer.
    """
    if settings.coder == "offline":
        return OfflineIdrisCoder()
    from agents.idris.llm_coder import make_llm_idris_coder

    return make_llm_idris_coder(settings)
