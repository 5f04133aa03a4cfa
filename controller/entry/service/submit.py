"""Accepting a run: check it the way ``run`` does before any engine call, then queue it durably.

A run is on a named target of the service's data folder, or on an uploaded one: the parts
are written under fixed names (the client's file names are never used as paths) into a
staging folder, planned there, and moved under ``runs/uploads/<run id>/`` in one rename
before the run is queued; anything refused removes what was written. :func:`accept_staged` is
that one pipeline for every upload: a run's folder here, a check (:mod:`.check_submit`) and a
blueprint run (:mod:`.blueprint_submit`) each say only what they write (:class:`Staging`).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.ports.errors import ConfigError, PlatformError
from agents.ports.memory import check_subject
from agents.registry import agent_for_target
from agents.targets import check_target_name
from controller.entry.service.schemas import RunRequest
from controller.entry.service.subjects import scoped_request
from controller.entry.service.uploads import require_free_space
from controller.platform.artefacts import new_run_id
from controller.platform.memory_sql import memory_stores
from controller.platform.settings import Settings, agent_config
from controller.platform.store import DuplicateRunId, Idempotency, NewRun, RunRow, RunStore
from controller.platform.uploads import UPLOADS, tree_bytes, upload_dir
from controller.runner.follows import require_followed

#: Ids tried before a collision is reported (at 48 random bits a second try is already unheard of).
ID_TRIES = 3


def plan(settings: Settings, request: RunRequest, data_dir: Path) -> Agent:
    """The target's agent, once it planned the run (pure: a bad target, option or coder is the CLI's line).

    Raises:
        TargetError, ConfigError: the run cannot be planned.
    """
    agent = agent_for_target(data_dir, request.target)
    if request.agent is not None and request.agent != agent.name:
        raise ConfigError(f"{request.target} is a target of the {agent.name} agent, not of {request.agent}",
                          hint="leave agent out, or name the target's own")
    if request.interactive and not agent.info.replies:
        raise ConfigError(f"{request.target} is a target of the {agent.name} agent, which takes no replies",
                          hint="interactive is for conversational targets (intake)")
    if request.subject is not None and not agent.info.memory:
        raise ConfigError(f"{request.target} is a target of the {agent.name} agent, which keeps no graph memory",
                          hint="subject is for conversational targets (intake)")
    subject = check_subject(request.subject) if request.subject is not None else None
    config = agent_config(settings).model_copy(update={"data_dir": data_dir, "await_replies": request.interactive,
                                                       "subject": subject})
    if request.coder is not None:
        config = config.model_copy(update={"coder": request.coder})
    planned = agent.plan(request.target, config, request.max_attempts)  # the CLI's checks; nothing written
    require_followed(planned, memory_stores(settings))  # a follower only after what it follows
    return agent


def queue(settings: Settings, store: RunStore, owner: str, agent: Agent, request: RunRequest, run_id: str,
          extra: dict[str, Any] | None = None, *, idempotency: Idempotency | None = None,
          upload_bytes: int = 0) -> RunRow:
    """Store the run as queued (durably); with ``idempotency``, the earlier run of the same request
    if there was one (its id is then not ``run_id``).

    Raises:
        QuotaExceeded, QueueFull: the owner's quota or the queue is full.
        IdempotencyConflict: the key came with another request.
    """
    options: dict[str, Any] = {k: v for k, v in (("max_attempts", request.max_attempts), ("coder", request.coder),
                                                 ("interactive", request.interactive or None),
                                                 ("subject", request.subject)) if v is not None}
    run = NewRun(id=run_id, owner=owner, agent=agent.name, target=request.target, options={**options, **(extra or {})},
                 upload_bytes=upload_bytes)
    limits = settings.service
    return store.submit(run, quota=limits.quota_per_token, queue_limit=limits.queue_limit, idempotency=idempotency,
                        upload_quota_bytes=limits.upload_quota_bytes, idempotency_seconds=limits.idempotency_seconds)


def service_run_id(target: str) -> str:
    """A new run id: the CLI's form (time, target) with 48 random bits, not 16, since a service
    accepts many runs of one target within a second."""
    return new_run_id(target) + secrets.token_hex(4)


def accept(settings: Settings, store: RunStore, owner: str, request: RunRequest,
           idempotency: Idempotency | None = None) -> RunRow:
    """A run on a named target of the service's data folder (its subject is the owner's: subjects.scoped)."""
    request = scoped_request(owner, request)
    agent = plan(settings, request, settings.data_dir)
    for _ in range(ID_TRIES - 1):
        try:
            return queue(settings, store, owner, agent, request, service_run_id(request.target),
                         idempotency=idempotency)
        except DuplicateRunId:
            continue
    return queue(settings, store, owner, agent, request, service_run_id(request.target), idempotency=idempotency)


def scrub_staging(exc: PlatformError, staging: Path) -> None:
    """Say the upload's names in ``exc``'s message, not the service's folders."""
    exc.message = exc.message.replace(f"{staging}/", "").replace(str(staging), "the upload")


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Create ``folder`` with ``files`` (fixed or checked plain names) in it."""
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)


def accept_upload(settings: Settings, store: RunStore, owner: str, request: RunRequest,
                  files: dict[str, bytes], idempotency: Idempotency | None = None) -> RunRow:
    """A run on an uploaded target: ``files`` maps fixed file names (statement.pdf, …) to their bytes.
    A replayed request (the same ``idempotency``) keeps nothing of this one's upload."""
    require_free_space(settings, sum(len(data) for data in files.values()))
    return accept_folder(settings, store, owner, request, lambda target: write_files(target, files), idempotency)


@dataclass(frozen=True)
class Staging:
    """What one kind of submission (a run on an uploaded folder, a check, a blueprint run) does in
    its staging folder; :func:`accept_staged` does the rest, the same for every kind."""

    fill: Callable[[Path], None]
    """Write what planning needs into the staging folder (it exists and is empty)."""
    plan: Callable[[Path], Agent]
    """The planned agent, given the staging folder (a refusal's message is scrubbed of the folder)."""
    options: Callable[[Path, str], dict[str, Any]] = lambda _staging, run_id: {"upload": run_id}
    """Once planned, given the staging folder and the run id: write the rest, and the row's options."""


def accept_staged(settings: Settings, store: RunStore, owner: str, request: RunRequest, staging: Staging,
                  idempotency: Idempotency | None = None) -> RunRow:
    """The one pipeline of every upload: stage, plan, rename under ``runs/uploads/<run id>/``, queue
    (with ``idempotency``: the earlier run of the same request, and this one's folder removed); a
    refusal leaves nothing. The caller checks the free space (:func:`require_free_space`) first."""
    folder = settings.runs_dir / UPLOADS / f".staging-{secrets.token_hex(8)}"
    final: Path | None = None
    try:
        folder.mkdir(parents=True)
        staging.fill(folder)
        try:
            agent = staging.plan(folder)
        except PlatformError as exc:
            scrub_staging(exc, folder)
            raise
        run_id = service_run_id(request.target)
        options = staging.options(folder, run_id)
        final = upload_dir(settings, run_id)
        os.rename(folder, final)
        row = queue(settings, store, owner, agent, request, run_id, options, idempotency=idempotency,
                    upload_bytes=max(1, tree_bytes(final)))
        if row.id != run_id:  # an earlier request with the same key made the run
            shutil.rmtree(final, ignore_errors=True)
        return row
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        if final is not None:
            shutil.rmtree(final, ignore_errors=True)
        raise


def accept_folder(settings: Settings, store: RunStore, owner: str, request: RunRequest,
                  fill: Callable[[Path], None], idempotency: Idempotency | None = None) -> RunRow:
    """A run on a target folder that ``fill`` creates (at the path it is given) in a staging folder.
    The caller checks the free space (:func:`require_free_space`) for what ``fill`` writes."""
    request = scoped_request(owner, request)

    def fill_target(staging: Path) -> None:
        fill(staging / check_target_name(request.target))  # a plain name: never a path out of the staging folder

    return accept_staged(settings, store, owner, request,
                         Staging(fill_target, lambda staging: plan(settings, request, staging)), idempotency)
