"""Run *an agent* on a target, or resume a run: services, image, warm pool, the run record,
checkpoints, observation, progress and the exit code, the same for every agent.

``run --target NAME`` plans the run first (the agent validates the target and its coder:
a mistake is one line and exit 2, before any engine call), then starts the engine, makes
sure of the image, writes ``runs/<id>/run.json`` (what resume and replay need) and streams
the agent's graph with a checkpointer (``runs/<id>/checkpoints.sqlite``).

``run --resume RUN_ID`` re-plans from the run record (same agent, target, attempt limit,
coder and data folder; the image the run used, rebuilt from its content hash if the engine
lost it), says which completed nodes it skips, and continues the graph from its last
checkpoint: nothing that finished runs again, neither a sandbox execution nor a coder call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agents.base import Agent, RunPlan
from agents.loop import NodeEvent
from controller.artifacts import SUMMARY_FILE, new_run_id, write_atomic
from controller.checkpoints import Checkpoint, close_checkpoint, open_checkpoint
from controller.errors import ImageBuildError, TargetError
from controller.images.base import image_exists
from controller.observability.recorder import observe_run
from controller.progress import Progress
from controller.report import RunSummary
from controller.services import Say, Services
from controller.settings import Settings

RUN_RECORD = "run.json"
RUN_RECORD_VERSION = 1
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def run_agent(agent: Agent, target: str, settings: Settings, max_attempts: int | None) -> int:
    """Run ``agent`` on ``target`` to its end; exit 0 passed (or unverified), 1 gave up."""
    plan = agent.plan(target, settings, max_attempts)
    progress = Progress()
    for note in plan.notes:
        progress.say(note)
    services = Services.start(settings, progress.say)
    try:
        image = agent.ensure_image(services, agent.images[0], progress.say)
        if hasattr(agent, "run_image"):  # a target's own environment (issue 13)
            image = agent.run_image(services, image, plan, progress.say)
        agent.prewarm(services, image, plan)
        run_id = new_run_id(plan.target)
        progress.say(f"run {run_id}: {plan.target} {plan.banner}, up to {plan.max_attempts} attempt(s)")
        run_dir = settings.runs_dir / run_id
        write_run_record(run_dir, run_record(agent, plan, run_id, image, settings))
        checkpoint = open_checkpoint(run_dir, run_id, agent.checkpoint_types(), resume=False)
        summary = observed_run(agent, plan, checkpoint, settings, services, image, progress)
    finally:
        services.close()
    progress.summary(summary)
    return summary.exit_code


def resume_run(run_id: str, settings: Settings) -> int:
    """Continue run ``run_id`` from its last completed node; exit as :func:`run_agent`."""
    from agents.registry import get_agent

    run_dir, record = load_run(settings, run_id)
    if (run_dir / SUMMARY_FILE).is_file():
        raise TargetError(f"run {run_id} already finished", hint=f"see {run_dir / SUMMARY_FILE}")
    agent = get_agent(record["agent"])
    settings = recorded_settings(settings, record)
    plan = agent.plan(record["target"], settings, record["max_attempts"])
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        image = recorded_image(agent, services, record["image_name"], record["image"], progress.say)
        checkpoint = open_checkpoint(run_dir, run_id, agent.checkpoint_types(), resume=True)
        progress.say(resume_line(agent, plan, checkpoint))
        agent.prewarm(services, image, plan)
        summary = observed_run(agent, plan, checkpoint, settings, services, image, progress)
    finally:
        services.close()
    progress.summary(summary)
    return summary.exit_code


def observed_run(agent: Agent, plan: RunPlan, checkpoint: Checkpoint, settings: Settings, services: Services,
                 image: str, progress: Progress) -> RunSummary:
    """Stream the agent's graph under the run's observer (logs, events.jsonl, history, push)."""
    run_id = checkpoint.thread_id
    observed = settings.model_copy(update={"max_attempts": plan.max_attempts})
    try:
        with observe_run(observed, run_id=run_id, agent=agent.name, target=plan.target, coder=plan.coder_name,
                         sandbox=services.sandbox) as observer:

            def on_event(event: NodeEvent) -> None:
                progress.step(event.attempt, event.node, event.outcome, event.seconds, event.detail)
                observer.node(event.node, event.attempt, event.outcome, event.seconds)

            try:
                summary = agent.run(plan, run_id=run_id, settings=settings, sandbox=services.sandbox, image=image,
                                    on_event=on_event, checkpoint=checkpoint)
            except KeyboardInterrupt:
                progress.say(f"run {run_id} interrupted; continue it with: python -m controller run --resume {run_id}")
                raise
            observer.finish(summary)
    finally:
        close_checkpoint(checkpoint)
    return summary


def resume_line(agent: Agent, plan: RunPlan, checkpoint: Checkpoint) -> str:
    """What resuming skips: the completed nodes in the checkpoint, and where the run goes on.

    Raises:
        TargetError: the run has no checkpoint, or its graph had already ended.
    """
    snapshot = agent.graph(plan.max_attempts, checkpoint.saver).get_state(checkpoint.config)
    if not snapshot.values and not snapshot.next:
        raise TargetError(f"run {checkpoint.thread_id} has no checkpoint to resume from",
                          hint="start a new run with --target")
    if not snapshot.next:
        raise TargetError(f"run {checkpoint.thread_id}'s graph had already ended", hint="start a new run with --target")
    done = [_node_label(e) for e in snapshot.values.get("events", [])]
    return (f"resuming run {checkpoint.thread_id}: skipped {len(done)} completed node(s) "
            f"({', '.join(done) or 'none'}); next: {', '.join(snapshot.next)}")


def _node_label(event: Any) -> str:
    return f"{event.node} [{event.attempt}]" if event.attempt else event.node


def run_record(agent: Agent, plan: RunPlan, run_id: str, image: str, settings: Settings) -> dict[str, Any]:
    """What resume and replay need to know of a run (``runs/<id>/run.json``)."""
    return {
        "schema_version": RUN_RECORD_VERSION, "run_id": run_id, "agent": agent.name, "target": plan.target,
        "max_attempts": plan.max_attempts, "coder": settings.coder, "model": settings.llm.model,
        "image_name": agent.images[0], "image": image, "limits": plan.limits.model_dump(),
        "data_dir": str(Path(settings.data_dir).resolve()), **agent.plan_record(plan),
    }


def write_run_record(run_dir: Path, record: dict[str, Any]) -> None:
    """Write ``run.json`` atomically."""
    write_atomic(run_dir / RUN_RECORD, json.dumps(record, indent=2) + "\n")


def load_run(settings: Settings, run_id: str) -> tuple[Path, dict[str, Any]]:
    """The run's folder and record.

    Raises:
        TargetError: a bad run id, or a run without a record (unknown, or older than run records).
    """
    if not _RUN_ID.match(run_id):
        raise TargetError(f"{run_id!r} is not a run id", hint="use the id a run printed, e.g. 20261122-061624-icici-a432")
    run_dir = settings.runs_dir / run_id
    path = run_dir / RUN_RECORD
    if not path.is_file():
        raise TargetError(f"no run {run_id} with a {RUN_RECORD} in {settings.runs_dir}",
                          hint="runs made before resume/replay existed cannot be resumed or replayed")
    try:
        return run_dir, json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"cannot read {path} ({type(exc).__name__})") from exc


def recorded_settings(settings: Settings, record: dict[str, Any]) -> Settings:
    """The settings of a resumed run: the environment's, with the run's coder, model and data folder."""
    llm = settings.llm.model_copy(update={"model": record.get("model")})
    return settings.model_copy(update={"coder": record["coder"], "llm": llm, "data_dir": Path(record["data_dir"])})


def recorded_image(agent: Agent, services: Services, name: str, tag: str, say: Say) -> str:
    """The image a run used; rebuilt when the engine lost it and today's sources hash to the same tag.

    Raises:
        ImageBuildError: the image is gone and sandbox_images/<name> no longer builds it.
    """
    if image_exists(services.client, tag):
        return tag
    say(f"the run's image {tag} is not in the engine; rebuilding it from sandbox_images/{name}")
    current = agent.ensure_image(services, name, say)
    if current != tag:
        raise ImageBuildError(f"cannot rebuild {tag}: sandbox_images/{name} has changed and now builds {current}",
                              hint="check out the sources the run used (git) and try again")
    return current
