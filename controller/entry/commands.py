"""What each CLI command does, given parsed arguments and the settings: a thin layer over
the runner (:class:`controller.runner.agent_runner.Runner`), which does the work."""

from __future__ import annotations

import argparse

from agents.ports.errors import ConfigError, TargetError
from agents.ports.run import CheckRequest
from agents.registry import AGENTS, agent_for_target, get_agent
from agents.targets import known_targets
from controller.entry.batch import run_all
from controller.entry.parent_watch import watch_stdin
from controller.entry.replay import replay as replay_run
from controller.platform.images.builder import available_images
from controller.platform.observability.exporter import (
    bind,
    build_exporter,
    make_app,
    serve_until_stopped,
)
from controller.platform.observability.metrics import KnownLabels
from controller.platform.settings import Settings
from controller.runner.agent_runner import Runner


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the target's agent (its target.toml says which; bank_parser without one); exit 0 passed, 1 gave up."""
    if getattr(args, "all", False):  # run --all: every target, each in its own child run
        return run_all(args, settings)
    if getattr(args, "watch_stdin", False):
        watch_stdin()
    if getattr(args, "resume", None):
        return Runner(settings).resume(args.resume)
    if getattr(args, "blueprint", None):
        raise ConfigError("--blueprint sends a blueprint to a service: add --server URL",
                          hint="to run it here, put it in a target folder: data/<name>/blueprint.json with its files")
    agent = agent_for_target(settings.data_dir, args.target)
    return Runner(settings).run(agent, args.target, args.max_attempts, run_id=getattr(args, "run_id", None))


def check(args: argparse.Namespace, settings: Settings) -> int:
    """Run existing artefacts (parsers, modules) through the target agent's sandbox and judgement."""
    if getattr(args, "watch_stdin", False):
        watch_stdin()
    agent = agent_for_target(settings.data_dir, args.target)
    given = next(kind for kind in ("parser", "module", "conversation", "report") if getattr(args, kind, None))
    artefact = agent.info.artefact
    if given != artefact:
        raise TargetError(f"{args.target} is a target of the {agent.name} agent, which checks a {artefact}, "
                          f"not a {given}", hint=f"use --{artefact} PATH")
    request = CheckRequest(args.target, getattr(args, given), args.jobs, vars(args))
    return Runner(settings).check(agent, request, run_id=getattr(args, "run_id", None))


def images(args: argparse.Namespace, settings: Settings) -> int:
    """Build every sandbox image that is missing; one that cannot be built does not stop the others."""
    failed = Runner(settings).images(available_images(settings))
    return max((exc.exit_code for exc in failed), default=0)


def replay(args: argparse.Namespace, settings: Settings) -> int:
    """Run a stored attempt again in a fresh sandbox; exit 0 same outcome, 1 different."""
    if args.attempt is not None and args.attempt < 1:
        raise ConfigError(f"--attempt {args.attempt} is not an attempt number", hint="attempts count from 1")
    return replay_run(args.run_id, args.attempt, settings)


def graph(args: argparse.Namespace, settings: Settings) -> int:
    """Print the agent's graph as Mermaid, from LangGraph's own drawing (offline)."""
    print(agent_graph_mermaid(args.agent), end="")
    return 0


def agent_graph_mermaid(name: str) -> str:
    """The Mermaid text of agent ``name``'s compiled graph (``draw_mermaid``: no network)."""
    mermaid: str = get_agent(name).graph(1).get_graph().draw_mermaid()
    return mermaid


def serve(args: argparse.Namespace, settings: Settings) -> int:
    """The service (runs over HTTP, /metrics of the run history, /healthz, /readyz) until stopped.

    ``--metrics-only``: just the exporter of the run history (/metrics, /healthz), as the
    observability stack's image runs it: no runs API, no workers, no engine needed. On a
    PostgreSQL store it exports the store's history (every replica's runs), else history.sqlite.
    """
    obs = settings.observability
    port = obs.serve_port if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a TCP port", hint="use 1-65535")
    host = args.host or obs.serve_host
    if getattr(args, "metrics_only", False):
        from controller.platform.shared_state import exported_history  # lazy: the store, only for the exporter

        exporter = build_exporter(exported_history(settings), known_labels(settings))
        serve_until_stopped(bind(host, port, make_app(exporter)), exporter)
        return 0
    # lazy: FastAPI, uvicorn and the store, only for the service (run's start-up stays short)
    from controller.entry.service.server import run_service
    from controller.platform.shared_state import run_history
    from controller.platform.store import open_store

    store = open_store(settings)
    run_service(settings, store, build_exporter(run_history(settings, store), known_labels(settings)), host, port)
    return 0


def known_labels(settings: Settings) -> KnownLabels:
    """Label values the exporter shows as zero before any run: agents, targets, reasons, nodes, images."""
    images = tuple(f"{settings.image_prefix}/{name}" for name in available_images(settings))
    reasons = tuple(dict.fromkeys(r for agent in AGENTS.values() for r in agent.info.failure_reasons))
    return KnownLabels(agents=tuple(AGENTS), targets=tuple(known_targets(settings.data_dir)), reasons=reasons,
                       nodes={name: agent.info.nodes for name, agent in AGENTS.items()}, images=images)
