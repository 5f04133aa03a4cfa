"""What the run store keeps: run rows, token rows, and the errors it raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agents.ports.errors import EnvironmentFault, PlatformError, UsageError

# The run row's statuses come from the one table of statuses (issue 41); re-exported here.
from agents.ports.status import OPEN as OPEN
from agents.ports.status import TERMINAL as TERMINAL
from agents.ports.status import RunStatus as RunStatus

#: A run that holds a place in the queue or a worker.
ACTIVE: frozenset[str] = frozenset({"queued", "running"})
# OPEN: a run that counts against its owner's quota: active, or checkpointed waiting for a reply
# (it holds no worker and no lease, but it will need one again).


class StoreError(EnvironmentFault):
    """The store cannot be read or written (a locked, corrupt or unreachable database)."""


class DuplicateRunId(StoreError):
    """A run with that id exists already (the caller picks another id)."""


class QuotaExceeded(UsageError):
    """The token already has as many queued and running runs as it may."""


class IdempotencyConflict(UsageError):
    """The ``Idempotency-Key`` was used before with a different request."""


class StorageFull(PlatformError):
    """The service's disk has less free space than it keeps in reserve; no upload is accepted."""

    exit_code = 3


class QueueFull(PlatformError):
    """The queue holds as many runs as the service accepts; try again later."""

    exit_code = 3


#: The owner of runs submitted while no token exists: no token name can be it (a token name
#: starts with a letter or a digit), so no token inherits them.
LOCAL_OWNER = "~local"
#: What kind of work a row is.
RunKind = Literal["run", "check"]


@dataclass(frozen=True)
class NewRun:
    """A run as submitted, before it is stored."""

    id: str
    owner: str
    agent: str
    target: str
    options: dict[str, Any] = field(default_factory=dict)
    #: Bytes its upload holds on disk (0: none), counted against its owner's upload quota.
    upload_bytes: int = 0

    @property
    def kind(self) -> RunKind:
        """A check (``options.kind``) or a run."""
        return "check" if self.options.get("kind") == "check" else "run"


@dataclass(frozen=True)
class Idempotency:
    """A submission's ``Idempotency-Key`` and a digest of the request it came with."""

    key: str
    request_hash: str


@dataclass(frozen=True)
class RunEvent:
    """One event of a run's journal; ``seq`` counts from 1 without gaps."""

    seq: int
    kind: str
    data: dict[str, Any]
    at: float


@dataclass(frozen=True)
class RunRow:
    """One run as the store has it."""

    id: str
    seq: int
    owner: str
    agent: str
    target: str
    options: dict[str, Any]
    status: RunStatus
    worker: str | None
    lease_until: float | None
    cancel_requested: bool
    takeovers: int
    created_at: float
    started_at: float | None
    finished_at: float | None
    exit_code: int | None
    summary: dict[str, Any] | None
    error: str
    kind: RunKind = "run"
    #: The number of its newest journal event (0: none yet).
    last_event: int = 0
    upload_bytes: int = 0
    #: Whether its upload is still on disk.
    upload_held: bool = False
    #: Set on the row :meth:`RunStore.submit` returns when an earlier request with the same
    #: idempotency key had made it (a concurrent duplicate found inside the transaction).
    replayed: bool = False

    @property
    def ended(self) -> bool:
        """The run has a final status."""
        return self.status in TERMINAL


@dataclass(frozen=True)
class RunPage:
    """One page of a listing; ``cursor`` asks for the next one (None: there is none)."""

    runs: list[RunRow]
    cursor: str | None


@dataclass(frozen=True)
class TokenRow:
    """A token's name and rights (never the token itself, nor its hash)."""

    name: str
    admin: bool
    created_at: float
