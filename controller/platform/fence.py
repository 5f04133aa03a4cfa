"""Fencing a run's process: a holder whose claim was taken over cannot commit a node's result.

A lease can run out while its holder still lives (a paused machine, a slow disk, a service
killed while its run's process lingers): the run is then taken over and resumed by another
process, and two processes may briefly run the same run. Stopping the old one when its parent
dies (:mod:`controller.platform.stop`) closes most of that window; the fence closes the rest,
as fencing tokens do for distributed locks (Kleppmann, "How to do distributed locking").

Every claim of a run by a service's worker writes a new token to the run folder's
:data:`CLAIM_FILE` before the run's process starts (:func:`write_claim`). The run's process reads
it once when it opens its checkpoints (:func:`read_fence`) and checks it again before every
write of a node's result to them (:class:`FencedSaver`): if another claim's token is there now,
the write is refused, logged (``run.fenced``) and the process stops as on Ctrl-C, writing
nothing more. A run started from the command line has no claim file and is not fenced.

The file is the service's and lives beside the checkpoints (the runs folder is shared by the
replicas); sandboxes never see it. It is read with a small bound and parsed strictly.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from agents.ports.artefacts import write_atomic
from controller.platform.stop import PROCESS, Stopped, StopSwitch

log = structlog.get_logger("sandloop.fence")

#: The run folder's claim file: the token of the claim now holding the run.
CLAIM_FILE = "claim.json"
_MAX_BYTES = 4096


def write_claim(run_dir: Path, generation: int) -> str:
    """Record a new claim of the run (before its process starts); returns the claim's token."""
    token = f"{generation}.{secrets.token_hex(8)}"
    write_atomic(run_dir / CLAIM_FILE, json.dumps({"generation": generation, "token": token}))
    return token


def current_token(run_dir: Path) -> str | None:
    """The token of the run's current claim; None when the run has no (readable) claim file."""
    try:
        with (run_dir / CLAIM_FILE).open("rb") as handle:
            data = json.loads(handle.read(_MAX_BYTES))
    except (OSError, ValueError):
        return None
    token = data.get("token") if isinstance(data, dict) else None
    return token if isinstance(token, str) else None


@dataclass(frozen=True)
class Fence:
    """The claim this process holds: its token, and the folder where the current one is."""

    run_dir: Path
    token: str
    switch: StopSwitch = PROCESS

    def check(self) -> None:
        """Raise :class:`Stopped` (and stop every execution of the process) if the run was claimed again.

        Raises:
            Stopped: another claim holds the run now.
        """
        now = current_token(self.run_dir)
        if now is None or now == self.token:
            return
        log.error("run.fenced", held=self.token, current=now)
        self.switch.stop("fenced")
        raise Stopped("fenced")


def read_fence(run_dir: Path, switch: StopSwitch = PROCESS) -> Fence | None:
    """The claim this process starts under (None for a run without a claim file: the CLI's)."""
    token = current_token(run_dir)
    return None if token is None else Fence(run_dir, token, switch)


class FencedSaver(BaseCheckpointSaver[Any]):
    """A checkpointer that checks the fence before each write and delegates everything to ``inner``."""

    def __init__(self, inner: BaseCheckpointSaver[Any], fence: Fence) -> None:
        super().__init__(serde=inner.serde)
        self.inner, self.fence = inner, fence

    @property
    def conn(self) -> Any:
        """The inner checkpointer's connection (closed with the run)."""
        return getattr(self.inner, "conn", None)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,  # noqa: A002
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        self.fence.check()
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self.fence.check()
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.fence.check()
        self.inner.delete_thread(thread_id)

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)


__all__ = ["CLAIM_FILE", "Fence", "FencedSaver", "current_token", "read_fence", "write_claim"]
