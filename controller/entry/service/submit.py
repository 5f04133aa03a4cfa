"""Accepting a run: check it the way ``run`` does before any engine call, then queue it."""

from __future__ import annotations

from typing import Any

from agents.ports.errors import ConfigError
from agents.registry import agent_for_target
from controller.entry.service.schemas import RunRequest
from controller.platform.artefacts import new_run_id
from controller.platform.settings import Settings, agent_config
from controller.platform.store import NewRun, RunRow, RunStore


def accept(settings: Settings, store: RunStore, owner: str, request: RunRequest) -> RunRow:
    """Plan the run (pure: a bad target, option or coder is the CLI's one line), then queue it durably.

    Raises:
        TargetError, ConfigError: the run cannot be planned.
        QuotaExceeded, QueueFull: the owner's quota or the queue is full.
    """
    agent = agent_for_target(settings.data_dir, request.target)
    if request.agent is not None and request.agent != agent.name:
        raise ConfigError(f"{request.target} is a target of the {agent.name} agent, not of {request.agent}",
                          hint="leave agent out, or name the target's own")
    config = agent_config(settings)
    if request.coder is not None:
        config = config.model_copy(update={"coder": request.coder})
    agent.plan(request.target, config, request.max_attempts)  # the CLI's checks; nothing written
    options: dict[str, Any] = {k: v for k, v in (("max_attempts", request.max_attempts),
                                                 ("coder", request.coder)) if v is not None}
    run = NewRun(id=new_run_id(request.target), owner=owner, agent=agent.name, target=request.target,
                 options=options)
    quota = settings.service
    return store.submit(run, quota=quota.quota_per_token, queue_limit=quota.queue_limit)
