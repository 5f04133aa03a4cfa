"""What each CLI command does, given parsed arguments and the settings."""

from __future__ import annotations

import argparse

from agents.base import CheckRequest
from agents.registry import AGENTS, agent_for_target, get_agent, image_owners
from controller.agent_runner import resume_run, run_agent
from controller.errors import ConfigError, TargetError
from controller.images.builder import available_images
from controller.progress import Progress
from controller.services import Services
from controller.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the target's agent (its target.toml says which; bank_parser without one); exit 0 passed, 1 gave up."""
    if getattr(args, "all", False):  # run --all: every target, each in its own child run
        from controller.batch import run_all

        return run_all(args, settings)
    if getattr(args, "resume", None):
        return resume_run(args.resume, settings)
    agent = agent_for_target(settings.data_dir, args.target)
    return run_agent(agent, args.target, settings, args.max_attempts)


def check(args: argparse.Namespace, settings: Settings) -> int:
    """Run existing artefacts (parsers, modules) through the target agent's sandbox and judgement."""
    agent = agent_for_target(settings.data_dir, args.target)
    given = "parser" if args.parser else "module"
    if given != agent.artefact:
        raise TargetError(f"{args.target} is a target of the {agent.name} agent, which checks a {agent.artefact}, "
                          f"not a {given}", hint=f"use --{agent.artefact} PATH")
    request = CheckRequest(args.target, args.parser or args.module, args.jobs, vars(args))
    return agent.check(request, settings, Progress())


def images(args: argparse.Namespace, settings: Settings) -> int:
    """Build every sandbox image that is missing; one that cannot be built does not stop the others."""
    from controller.errors import ImageBuildError

    progress = Progress()
    services = Services.start(settings, progress.say)
    owners = image_owners()
    failed: list[ImageBuildError] = []
    try:
        for name in available_images(settings):
            try:
                tag = (owners[name].ensure_image(services, name, progress.say) if name in owners
                       else services.image(name))
                progress.say(f"{name}: {tag}")
            except ImageBuildError as exc:
                progress.say(f"{name}: not built: {exc.one_line()}")
                failed.append(exc)
    finally:
        services.close()
    return max((exc.exit_code for exc in failed), default=0)


def replay(args: argparse.Namespace, settings: Settings) -> int:
    """Run a stored attempt again in a fresh sandbox; exit 0 same outcome, 1 different."""
    from controller.replay import replay as replay_run

    if args.attempt is not None and args.attempt < 1:
        raise ConfigError(f"--attempt {args.attempt} is not an attempt number", hint="attempts count from 1")
    return replay_run(args.run_id, args.attempt, settings)


def graph(args: argparse.Namespace, settings: Settings) -> int:
    """Print the agent's graph as Mermaid, from LangGraph's own drawing (offline)."""
    print(agent_graph_mermaid(args.agent), end="")
    return 0


def agent_graph_mermaid(name: str) -> str:
    """The Mermaid text of agent ``name``'s compiled graph (``draw_mermaid``: no network)."""
    return get_agent(name).graph(1).get_graph().draw_mermaid()


def serve(args: argparse.Namespace, settings: Settings) -> int:
    """Serve /metrics (derived from the run history) and /healthz until stopped."""
    from controller.observability.exporter import bind, build_exporter, make_app, serve_until_stopped
    from controller.observability.history import HistoryStore
    from controller.observability.recorder import history_path

    obs = settings.observability
    port = obs.serve_port if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a TCP port", hint="use 1-65535")
    exporter = build_exporter(HistoryStore(history_path(settings)), known_labels(settings))
    server = bind(args.host or obs.serve_host, port, make_app(exporter))
    serve_until_stopped(server, exporter)
    return 0


def known_labels(settings: Settings):  # noqa: ANN201 - KnownLabels, imported lazily
    """Label values the exporter shows as zero before any run: agents, targets, reasons, nodes, images."""
    from controller.observability.metrics import KnownLabels
    from controller.targets import known_targets

    images = tuple(f"{settings.image_prefix}/{name}" for name in available_images(settings))
    reasons = tuple(dict.fromkeys(r for agent in AGENTS.values() for r in agent.failure_reasons()))
    return KnownLabels(agents=tuple(AGENTS), targets=tuple(known_targets(settings.data_dir)), reasons=reasons,
                       nodes={name: agent.known_nodes() for name, agent in AGENTS.items()}, images=images)


def bench(args: argparse.Namespace, settings: Settings) -> int:
    """Time a parser through the sandbox and as a plain local process (see controller.bench)."""
    from controller.bench import run_bench

    return run_bench(args, settings)
