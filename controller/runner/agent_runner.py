"""The runner: the one composition root every entry point (the CLI; later the service) calls.

A :class:`Runner` is built once per process from the frozen settings. It derives the agents'
config once, opens sessions (the only place services start), and runs, resumes, checks and
replays *any* agent the same way: the agent plans (pure: a mistake is one line and exit 2,
before any engine call), the runner makes sure of the plan's image and environment, writes
``runs/<id>/run.json`` (what resume and replay need), opens the checkpoint and the artefact
store, and streams the agent's graph under the run's observer.

``resume`` re-plans from the run record (same agent, target, attempt limit, coder and data
folder; the image the run used, rebuilt from its content hash if the engine lost it), says
which completed nodes it skips, and continues the graph from its last checkpoint: nothing
that finished runs again, neither a sandbox execution nor a coder call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.ports.artefacts import SUMMARY_FILE, write_atomic
from agents.ports.config import AgentConfig
from agents.ports.environments import Environment
from agents.ports.errors import ImageBuildError, RunPaused, TargetError
from agents.ports.events import NodeEvent, Say
from agents.ports.outcome import RunSummary
from agents.ports.run import (
    CheckContext,
    CheckRequest,
    CheckVerdict,
    Plan,
    ReplayOutcome,
    RunContext,
)
from agents.registry import get_agent
from controller.platform.artefacts import RUN_RECORD, RunArtefacts, new_run_id
from controller.platform.checkpoints import Checkpoint, close_checkpoint, open_checkpoint
from controller.platform.images.base import image_exists
from controller.platform.memory_sql import memory_stores
from controller.platform.observability.recorder import observe_run
from controller.platform.progress import OutputClosed, Progress
from controller.platform.sandbox.factory import sandbox_description
from controller.platform.settings import Settings, agent_config, state_dsn
from controller.runner.check_record import write_check_summary
from controller.runner.follows import require_followed
from controller.runner.no_sandbox import NoSandboxServices
from controller.runner.services import DockerServices, Services, open_session

#: 2: the ports layout (checkpoints name agents.ports types); runs recorded as 1 cannot resume.
RUN_RECORD_VERSION = 2
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


class Runner:
    """Runs, resumes, checks and replays agents with one set of settings and one console."""

    def __init__(self, settings: Settings, progress: Progress | None = None, say: Say | None = None) -> None:
        self.settings = settings
        self.progress = progress or Progress()
        self.say: Say = say or self.progress.say
        self.config: AgentConfig = agent_config(settings)

    @contextmanager
    def session(self, min_pool: int = 0, *, sandbox: bool = True) -> Iterator[Services]:
        """Services for one command (a :class:`~agents.ports.run.Session` for agents); with
        ``sandbox=False`` (a plan that names no image) none: no engine is needed."""
        if not sandbox:
            yield NoSandboxServices(self.say)
            return
        with open_session(self.settings, self.say, min_pool=min_pool) as services:
            yield services

    def run(self, agent: Agent, target: str, max_attempts: int | None, run_id: str | None = None) -> int:
        """Run ``agent`` on ``target`` to its end; exit 0 passed (or unverified), 1 gave up.

        ``run_id``: the id to use (the service chose it when it accepted the run), else a new one.
        """
        if run_id is not None:
            check_new_run_id(self.settings, run_id)
        plan = agent.plan(target, self.config, max_attempts)
        require_followed(plan, memory_stores(self.settings))  # a follower after what it follows
        for note in plan.notes:
            self.say(note)
        with self.session(sandbox=plan.image is not None) as services:
            image = services.image(plan.image) if plan.image is not None else ""
            environment = self._environment(services, image, plan)
            run_image = environment.tag if environment is not None and environment.tag else image
            self._prewarm(services, run_image, plan)
            run_id = run_id or new_run_id(plan.target)
            self.say(f"run {run_id}: {plan.target} {plan.banner}, up to {plan.max_attempts} attempt(s)")
            run_dir = self.settings.runs_dir / run_id
            write_run_record(run_dir, run_record(agent, plan, run_id, run_image, self.config, environment))
            checkpoint = open_checkpoint(run_dir, run_id, agent.info.state_types, resume=False,
                                         dsn=state_dsn(self.settings))
            summary = self._observed(agent, plan, checkpoint, services, run_image, environment)
        self.progress.summary(summary)
        return summary.exit_code

    def resume(self, run_id: str) -> int:
        """Continue run ``run_id`` from its last completed node; exit as :meth:`run`."""
        run_dir, record = load_run(self.settings, run_id)
        if (run_dir / SUMMARY_FILE).is_file():
            raise TargetError(f"run {run_id} already finished", hint=f"see {run_dir / SUMMARY_FILE}")
        agent = get_agent(record["agent"])
        plan = agent.plan(record["target"], recorded_config(self.config, record), record["max_attempts"])
        with self.session(sandbox=bool(record["image_name"])) as services:
            image = recorded_image(services, record["image_name"], record["image"], self.say)
            environment = Environment(image, "reused", 0.0) if record.get("environment") else None
            checkpoint = open_checkpoint(run_dir, run_id, agent.info.state_types, resume=True,
                                         dsn=state_dsn(self.settings))
            if started(agent, plan, checkpoint):
                self.say(resume_line(agent, plan, checkpoint))
            else:  # it stopped between its run.json and its graph's first checkpoint: nothing ran yet
                checkpoint = replace(checkpoint, resume=False)
                self.say(f"run {run_id} stopped before its first checkpoint: starting it from the beginning")
            self._prewarm(services, image, plan)
            summary = self._observed(agent, plan, checkpoint, services, image, environment)
        self.progress.summary(summary)
        return summary.exit_code

    def check(self, agent: Agent, request: CheckRequest, run_id: str | None = None) -> int:
        """Run existing artefacts through ``agent``'s sandbox and judgement; the agent's exit code.

        With ``run_id`` (the service's checks) the verdicts are kept in ``runs/<run_id>/summary.json``.
        """
        memory = memory_stores(self.settings)
        if run_id is None:
            return agent.check(request, CheckContext(self.config, self.say, self.session, memory=memory))
        check_new_run_id(self.settings, run_id)
        kept: list[CheckVerdict] = []
        code = agent.check(request, CheckContext(self.config, self.say, self.session, kept.extend, memory))
        write_check_summary(self.settings.runs_dir / run_id, agent.name, request.target, code, kept)
        return code

    def replay(self, run_id: str, attempt: int | None) -> tuple[ReplayOutcome, int]:
        """Replay attempt ``attempt`` (default: the last) of run ``run_id``; the outcome and the attempt."""
        run_dir, record = load_run(self.settings, run_id)
        agent = get_agent(record["agent"])
        attempt = attempt or last_attempt(run_dir)
        with self.session(sandbox=bool(record["image_name"])) as services:
            image = recorded_image(services, record["image_name"], record["image"], self.say)
            self.say(f"replaying attempt {attempt} of run {run_id} ({agent.name}, {record['target']}) "
                              f"in a fresh sandbox: {image}, timeout {record['limits']['timeout_seconds']:g} s, "
                              f"memory {record['limits']['memory_mb']} MiB")
            return agent.replay(services.sandbox, image, run_dir, record, attempt), attempt

    def images(self, names: list[str], *, report: bool = True) -> list[ImageBuildError]:
        """Make sure of every image in ``names``; one that cannot be built does not stop the others.

        Each is reported as ``name: tag`` (with ``report``) or ``name: not built: why``.
        """
        failed: list[ImageBuildError] = []
        with self.session() as services:
            for name in names:
                try:
                    tag = services.image(name)
                    if report:
                        self.say(f"{name}: {tag}")
                except ImageBuildError as exc:
                    self.say(f"{name}: not built: {exc.one_line()}")
                    failed.append(exc)
        return failed

    def _environment(self, services: Services, image: str, plan: Plan) -> Environment | None:
        """The plan's declared environment, built on top of ``image`` (a target's own, issue 13)."""
        if plan.environment is None:
            return None
        return services.target_environment(image, plan.environment, plan.environment_as_of)

    @staticmethod
    def _prewarm(services: Services, image: str, plan: Plan) -> None:
        if plan.prewarm is not None:
            services.prewarm(plan.prewarm(image))

    def _artefacts(self, run_id: str, *, sandboxed: bool) -> RunArtefacts:
        """The run's folder; its ``summary.json`` names where the sandboxes ran (backend, runtime)."""
        fields = {"sandbox": sandbox_description(self.settings)} if sandboxed else {}
        return RunArtefacts(self.settings.runs_dir / run_id, fields)

    def _observed(self, agent: Agent, plan: Plan, checkpoint: Checkpoint, services: Services, image: str,
                  environment: Environment | None) -> RunSummary:
        """Stream the agent's graph under the run's observer (logs, events.jsonl, history, push)."""
        run_id = checkpoint.thread_id
        progress = self.progress
        try:
            with observe_run(self.settings, run_id=run_id, agent=agent.name, target=plan.target,
                             coder=plan.coder_name, max_attempts=plan.max_attempts,
                             sandbox=services.sandbox) as observer:

                def on_event(event: NodeEvent) -> None:
                    progress.step(event.attempt, event.node, event.outcome, event.seconds, event.detail)
                    observer.node(event.node, event.attempt, event.outcome, event.seconds)

                ctx = RunContext(run_id=run_id, config=self.config, sandbox=services.sandbox, image=image,
                                 artefacts=self._artefacts(run_id, sandboxed=bool(image)), on_event=on_event,
                                 environment=environment, checkpoint=checkpoint, say=self.say,
                                 image_of=services.image, memory=memory_stores(self.settings))
                try:
                    summary = agent.run(plan, ctx)
                except KeyboardInterrupt:
                    progress.say(f"run {run_id} interrupted; continue it with: "
                                 f"python -m controller run --resume {run_id}")
                    raise
                except RunPaused as paused:
                    progress.say(f"run {run_id} {paused.message} (checkpointed: it continues when it is resumed)")
                    raise
                except OutputClosed:
                    raise OutputClosed(run_id) from None  # the CLI names the run to resume on stderr
                observer.finish(summary)
        finally:
            close_checkpoint(checkpoint)
        return summary


def run_record(agent: Agent, plan: Plan, run_id: str, image: str, config: AgentConfig,
               environment: Environment | None = None) -> dict[str, Any]:
    """What resume and replay need to know of a run (``runs/<id>/run.json``)."""
    return {
        "schema_version": RUN_RECORD_VERSION, "run_id": run_id, "agent": agent.name, "target": plan.target,
        "max_attempts": plan.max_attempts, "coder": config.coder, "model": config.llm.model,
        "image_name": plan.image or "", "image": image, "environment": environment is not None,
        "limits": plan.limits.model_dump(), "data_dir": str(Path(config.data_dir).resolve()),
        **plan.record,
    }


def started(agent: Agent, plan: Plan, checkpoint: Checkpoint) -> bool:
    """Whether the run's graph wrote any checkpoint (a run can stop between run.json and that)."""
    snapshot = agent.graph(plan.max_attempts, checkpoint.saver).get_state(checkpoint.config)
    return bool(snapshot.values or snapshot.next)


def resume_line(agent: Agent, plan: Plan, checkpoint: Checkpoint) -> str:
    """What resuming skips: the completed nodes in the checkpoint, and where the run goes on.

    Raises:
        TargetError: the run has no checkpoint.
    """
    snapshot = agent.graph(plan.max_attempts, checkpoint.saver).get_state(checkpoint.config)
    if not snapshot.values and not snapshot.next:
        raise TargetError(f"run {checkpoint.thread_id} has no checkpoint to resume from",
                          hint="start a new run with --target")
    # A node that finished (its writes saved) just before the process died leaves ``next`` empty
    # while its task, writes attached, is still pending: that graph has not ended.
    pending = [task.name for task in snapshot.tasks if task.name not in snapshot.next]
    if not snapshot.next and not pending:
        # Stopped after its graph's last checkpoint, before summary.json (a kill, the service's
        # death): resuming streams nothing and hands the agent the final state to summarise.
        return (f"resuming run {checkpoint.thread_id}: its graph had ended before the run's summary was written; "
                f"nothing runs again ({len(snapshot.values.get('events', []))} node(s) completed), "
                "the summary comes from its last checkpoint")
    done = [_node_label(e) for e in snapshot.values.get("events", [])] + pending
    following = ", ".join(snapshot.next) or f"the node after {pending[-1]}"
    return (f"resuming run {checkpoint.thread_id}: skipped {len(done)} completed node(s) "
            f"({', '.join(done) or 'none'}); next: {following}")


def _node_label(event: Any) -> str:
    return f"{event.node} [{event.attempt}]" if event.attempt else str(event.node)


def write_run_record(run_dir: Path, record: dict[str, Any]) -> None:
    """Write ``run.json`` atomically."""
    write_atomic(run_dir / RUN_RECORD, json.dumps(record, indent=2) + "\n")


def load_run(settings: Settings, run_id: str) -> tuple[Path, dict[str, Any]]:
    """The run's folder and record.

    Raises:
        TargetError: a bad run id, a run without a record (unknown, or older than run records),
            or a run recorded by an older version whose checkpoints this one cannot read.
    """
    if not _RUN_ID.match(run_id):
        raise TargetError(f"{run_id!r} is not a run id",
                          hint="use the id a run printed, e.g. 20261122-061624-icici-a432")
    run_dir = settings.runs_dir / run_id
    path = run_dir / RUN_RECORD
    if not path.is_file():
        raise TargetError(f"no run {run_id} with a {RUN_RECORD} in {settings.runs_dir}",
                          hint="runs made before resume/replay existed cannot be resumed or replayed")
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"cannot read {path} ({type(exc).__name__})") from exc
    if record.get("schema_version") != RUN_RECORD_VERSION:
        raise TargetError(f"run {run_id} is from an older version of sandloop (run record "
                          f"{record.get('schema_version')}, this version reads {RUN_RECORD_VERSION}): cannot resume "
                          "or replay it", hint="start a new run with --target")
    return run_dir, record


def check_new_run_id(settings: Settings, run_id: str) -> None:
    """Refuse a given run id that is malformed or already names a run.

    Raises:
        TargetError: either.
    """
    if not _RUN_ID.match(run_id):
        raise TargetError(f"{run_id[:130]!r} is not a run id", hint="letters, digits, '-' and '_', at most 128")
    if (settings.runs_dir / run_id / RUN_RECORD).exists():
        raise TargetError(f"run {run_id} exists already", hint=f"continue it with --resume {run_id}")


def last_attempt(run_dir: Path) -> int:
    """The highest attempt number in the run folder.

    Raises:
        TargetError: the run has no attempt.
    """
    numbers = [int(p.name) for p in (run_dir / "attempts").glob("*") if p.is_dir() and p.name.isdigit()]
    if not numbers:
        raise TargetError(f"run {run_dir.name} has no attempts to replay", hint=f"see {run_dir}")
    return max(numbers)


def recorded_config(config: AgentConfig, record: dict[str, Any]) -> AgentConfig:
    """The agent config of a resumed run: this process's, with the run's coder, model and data folder
    (and, for a conversation whose replies come from the service, that: it still waits for them)."""
    llm = config.llm.model_copy(update={"model": record.get("model")})
    update: dict[str, Any] = {"coder": record["coder"], "llm": llm, "data_dir": Path(record["data_dir"])}
    if record.get("await_replies"):
        update["await_replies"] = True
    if record.get("subject"):
        update["subject"] = record["subject"]
    return config.model_copy(update=update)


def recorded_image(services: Services, name: str, tag: str, say: Any) -> str:
    """The image a run used; rebuilt when the engine lost it and today's sources hash to the same tag.

    Raises:
        ImageBuildError: the image is gone and sandbox_images/<name> no longer builds it.
    """
    if not name or not isinstance(services, DockerServices) or image_exists(services.client, tag):
        return tag
    say(f"the run's image {tag} is not in the engine; rebuilding it from sandbox_images/{name}")
    current = services.image(name)
    if current != tag:
        raise ImageBuildError(f"cannot rebuild {tag}: sandbox_images/{name} has changed and now builds {current}",
                              hint="check out the sources the run used (git) and try again")
    return current
