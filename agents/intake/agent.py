"""The intake agent (seed 002) behind the one agent interface (:class:`agents.base.Agent`).

It runs no generated or supplied code: its roles are project code over bounded text, so it
makes no sandbox execution and its plan names no image (``image=None``): the runner opens no
engine session for it, so an intake run needs no Docker at all. ``replay`` has nothing to replay; ``check`` runs other
scripted conversations (files of replies) against the target's schemas and expected.json.
The roles are the deterministic rules, or a model's with the rules as fallback (``coder``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agents.base import AgentInfo
from agents.intake.checking import check_conversations
from agents.intake.graph import build_graph
from agents.intake.nodes import AGENT
from agents.intake.replies import Replies, from_reply_box, from_terminal
from agents.intake.roles import OfflineRoles, Roles
from agents.intake.run import INTAKE_REASONS, run_intake_agent
from agents.intake.state import IntakeState
from agents.intake.target import MAX_REPLIES, IntakeTarget, load_intake_target
from agents.ports.config import AgentConfig
from agents.ports.errors import TargetError
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckContext, CheckRequest, Follows, Plan, ReplayOutcome, RunContext
from agents.ports.sandbox import Sandbox
from agents.target_chains import predecessors
from agents.targets import load_target_config

#: The image every plan must name; the intake agent never runs anything in it.


class IntakeAgent:
    """Collects a user's facts into a graph of nodes, one scripted reply per turn."""

    name = AGENT
    info = AgentInfo(
        target_kinds=("conversation",), artefact="conversation", images=(), state_types=(IntakeState,),
        nodes=tuple(name for name in build_graph().nodes if not name.startswith("__")),
        failure_reasons=INTAKE_REASONS, replies=True, memory=True,
    )

    def plan(self, target: str, config: AgentConfig, max_attempts: int | None) -> Plan:
        """The target.toml, node schemas, script and expected.json, checked before any engine call."""
        intake = load_target(config, target)
        subject = config.subject or intake.subject
        follows = followed(config, intake, subject)
        roles = make_roles(config)
        live = config.interactive or config.await_replies
        turns = max_attempts or intake.max_turns or (MAX_REPLIES if live else len(intake.replies))
        source = ("replies from the terminal" if config.interactive else
                  "replies posted to the service" if config.await_replies else
                  f"{len(intake.replies)} scripted repl{'y' if len(intake.replies) == 1 else 'ies'}")
        who = f"; subject {subject}" if subject else ""
        banner = f"(goal: {intake.goal[:60]}; {len(intake.nodes)} node(s), {source}{who}; a turn is an attempt)"
        return Plan(agent=AGENT, target=intake.name, max_attempts=turns, limits=config.limits, coder=roles,
                    coder_name=roles.name, banner=banner, image=None,
                    record={"nodes": list(intake.nodes), "interactive": config.interactive,
                            "await_replies": config.await_replies and not config.interactive,
                            "subject": subject},
                    inputs={"target": intake, "interactive": config.interactive,
                            "await_replies": config.await_replies, "subject": subject}, follows=follows)

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """analyze → ask → listen → resolve → ask | decide → ask | finish."""
        return build_graph(checkpointer)

    def run(self, plan: Plan, ctx: RunContext) -> RunSummary:
        """Stream the conversation (see :func:`agents.intake.run.run_intake_agent`)."""
        target: IntakeTarget = plan.inputs["target"]
        return run_intake_agent(target, run_id=ctx.run_id, artefacts=ctx.artefacts, max_turns=plan.max_attempts,
                                on_event=ctx.on_event, memory=ctx.memory, subject=plan.inputs.get("subject"),
                                checkpoint=ctx.checkpoint, roles=plan.coder,
                                replies=reply_source(plan, ctx.artefacts.run_dir))

    def check(self, request: CheckRequest, ctx: CheckContext) -> int:
        """Run other scripted conversations against the target; exit 0 when all pass, 1 otherwise."""
        target = load_target(ctx.config, request.target)
        return check_conversations(target, request.paths, ctx.say, ctx.memory, make_roles(ctx.config))

    def replay(self, sandbox: Sandbox, image: str, run_dir: Path, record: dict[str, Any],
               attempt: int) -> ReplayOutcome:
        """Nothing to replay: the intake agent runs nothing in a sandbox."""
        raise TargetError(f"run {record['run_id']} is an intake conversation: it ran nothing in a sandbox, so "
                          "there is nothing to replay",
                          hint=f"see {run_dir / 'transcript.md'}, and its memory: python -m controller memory "
                               f"{record['run_id']}")


def followed(config: AgentConfig, target: IntakeTarget, subject: str | None) -> Follows | None:
    """The conversation ``target`` continues (checked: a known intake target, no cycle, one subject).

    Raises:
        ConfigError: see :func:`agents.target_chains.predecessors`.
    """
    if target.follows is None:
        return None
    predecessors(config.data_dir, target.name)
    return Follows(target.follows, subject)


def reply_source(plan: Plan, run_dir: Path) -> Replies | None:
    """The terminal (``--interactive``), the run folder's reply box (a service's run), else None: the script."""
    if plan.inputs.get("interactive"):
        return from_terminal(sys.stdin, sys.stdout)
    if plan.inputs.get("await_replies"):
        return from_reply_box(run_dir)
    return None


def make_roles(config: AgentConfig) -> Roles:
    """The deterministic roles, or a model's (checked against its endpoint first).

    Raises:
        ConfigError: an LLM coder without its key, with a rejected key or an unknown model.
        LLMUnavailable: the LLM's endpoint does not answer.
    """
    if config.coder == "offline":
        return OfflineRoles()
    from agents.intake.llm_roles import make_llm_roles  # lazy: LLM client libraries, LLM roles only

    return make_llm_roles(config)


def load_target(config: AgentConfig, target: str) -> IntakeTarget:
    """The validated intake target.

    Raises:
        TargetError: not a target of the intake agent, or missing files. ConfigError: a file that does not validate.
    """
    toml = load_target_config(config.data_dir, target)
    if toml is None or toml.agent != AGENT:
        raise TargetError(f"{target} is not a target of the intake agent (its target.toml must say agent = \"intake\")")
    return load_intake_target(config.data_dir, target, toml, scripted=not (config.interactive or config.await_replies))

