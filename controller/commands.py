"""What each CLI command does, given parsed arguments and the settings."""

from __future__ import annotations

import argparse

from agents.bank_parser.coders import check_coder, make_coder
from agents.bank_parser.evaluate import IMAGE_NAME, parser_spec
from agents.bank_parser.nodes import AGENT
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.state import NodeEvent
from agents.lessons import LESSONS_FILE, ExecutionHistory
from controller.artifacts import new_run_id
from controller.checking import check_many, collect_parsers, print_report
from controller.errors import ConfigError, TargetError
from controller.images.builder import available_images
from controller.observability.recorder import observe_run
from controller.progress import Progress
from controller.services import Services
from controller.settings import Settings
from controller.target_config import load_target_config
from controller.targets import resolve_target


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the target's agent (its target.toml says which; bank_parser without one); exit 0 passed, 1 gave up."""
    if getattr(args, "all", False):  # run --all: every target, each in its own child run
        from controller.batch import run_all

        return run_all(args, settings)
    config = load_target_config(settings.data_dir, args.target)
    if config is not None and config.agent == "idris":
        from agents.idris.command import run_idris

        return run_idris(args, settings, config)
    if config is not None and config.limits.max_attempts is not None and args.max_attempts is None:
        settings = settings.model_copy(update={"max_attempts": config.limits.max_attempts})
    if config is not None and config.output is not None:  # issue 15: [output] of target.toml
        settings = settings.model_copy(update={"output": config.output})
    target = resolve_target(args.target, settings.data_dir)
    history = ExecutionHistory(settings.runs_dir / LESSONS_FILE)
    coder = make_coder(settings, lessons=history.lessons(AGENT, target.name))
    coder_line = check_coder(coder)  # an LLM's key, endpoint and model: exit 2 before anything starts
    progress = Progress()
    if coder_line:
        progress.say(coder_line)
    services = Services.start(settings, progress.say)
    try:
        image = services.image(IMAGE_NAME)
        services.prewarm(parser_spec(image, "", b"", settings.sandbox, {}))  # ready by execute
        run_id = new_run_id(target.name)
        progress.say(f"run {run_id}: {target.name} ({target.pdf.name}), up to {settings.max_attempts} attempt(s)")

        # Logs bound to the run, runs/<id>/events.jsonl, the history record and the push.
        with observe_run(settings, run_id=run_id, agent=AGENT, target=target.name,
                         coder=coder.name, sandbox=services.sandbox) as observer:

            def on_event(event: NodeEvent) -> None:
                progress.step(event.attempt, event.node, event.outcome, event.seconds, event.detail)
                observer.node(event.node, event.attempt, event.outcome, event.seconds)

            summary = run_parser_agent(
                run_id=run_id, target=target, settings=settings, sandbox=services.sandbox,
                image=image, coder=coder, on_event=on_event, history=history,
            )
            observer.finish(summary)
    finally:
        services.close()
    progress.summary(summary)
    return summary.exit_code


def check(args: argparse.Namespace, settings: Settings) -> int:
    """Run existing parsers through the sandbox and the comparison; exit 0 all pass, 1 otherwise."""
    config = load_target_config(settings.data_dir, args.target)
    if config is not None and config.agent != AGENT:
        raise TargetError(f"{args.target} is a target of the {config.agent} agent; check runs bank-statement parsers",
                          hint="use make run TARGET=" + args.target)
    target = resolve_target(args.target, settings.data_dir)
    parsers = collect_parsers(args.parser)
    jobs = args.jobs or settings.parallel_checks
    progress = Progress()
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


def images(args: argparse.Namespace, settings: Settings) -> int:
    """Build every sandbox image that is missing; one that cannot be built does not stop the others."""
    from agents.idris.image import ensure_idris_image
    from agents.idris.typecheck import IMAGE_NAME as IDRIS_IMAGE
    from controller.errors import ImageBuildError

    progress = Progress()
    services = Services.start(settings, progress.say)
    failed: list[ImageBuildError] = []
    try:
        for name in available_images(settings):
            try:
                tag = (ensure_idris_image(services.client, settings, progress.say) if name == IDRIS_IMAGE
                       else services.image(name))
                progress.say(f"{name}: {tag}")
            except ImageBuildError as exc:
                progress.say(f"{name}: not built: {exc.one_line()}")
                failed.append(exc)
    finally:
        services.close()
    return max((exc.exit_code for exc in failed), default=0)


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
    from agents.bank_parser.coders.base import FailureKind
    from agents.bank_parser.graph import build_graph
    from controller.observability.metrics import KnownLabels
    from controller.targets import known_targets

    from agents.idris.graph import build_graph as build_idris_graph
    from agents.idris.nodes import AGENT as IDRIS_AGENT
    from agents.idris.run import IDRIS_REASONS

    nodes = tuple(name for name in build_graph(1).nodes if not name.startswith("__"))
    idris_nodes = tuple(name for name in build_idris_graph(1).nodes if not name.startswith("__"))
    images = tuple(f"{settings.image_prefix}/{name}" for name in available_images(settings))
    reasons = tuple(dict.fromkeys([kind.value for kind in FailureKind] + list(IDRIS_REASONS)))
    return KnownLabels(agents=(AGENT, IDRIS_AGENT), targets=tuple(known_targets(settings.data_dir)), reasons=reasons,
                       nodes={AGENT: nodes, IDRIS_AGENT: idris_nodes}, images=images)


def bench(args: argparse.Namespace, settings: Settings) -> int:
    """Time a parser through the sandbox and as a plain local process (see controller.bench)."""
    from controller.bench import run_bench

    return run_bench(args, settings)
