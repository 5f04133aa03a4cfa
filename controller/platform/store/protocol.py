"""The run store's interface: what the service and its workers need of a durable queue.

Every state change is one atomic statement or transaction, so that several workers (threads,
processes, replicas) can share one store: ``claim`` hands a queued run to exactly one worker,
``renew`` keeps a worker's leases alive, and ``expired`` / ``take_over`` let any worker pick up
the runs of one that died. Every change of a run's status is journaled with it (``events``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

from controller.platform.store.models import (
    Idempotency,
    NewRun,
    RunEvent,
    RunPage,
    RunRow,
    RunStatus,
    TokenRow,
)


class RunStore(Protocol):
    """A durable queue of runs and a table of hashed bearer tokens."""

    # runs -------------------------------------------------------------------------------
    def submit(self, run: NewRun, *, quota: int, queue_limit: int, idempotency: Idempotency | None = None,
               upload_quota_bytes: int | None = None, idempotency_seconds: float = 86400.0) -> RunRow:
        """Store ``run`` as queued, durably, unless its owner's quota or the queue is full.

        With ``idempotency``, a key its owner used in the last ``idempotency_seconds`` with the
        same request gives back that request's run (its id is not ``run.id``: nothing was written).

        Raises:
            QuotaExceeded: the owner has ``quota`` open runs (or ended ones still holding an upload)
                already, or its uploads would hold more than ``upload_quota_bytes``.
            QueueFull: ``queue_limit`` runs are queued already.
            DuplicateRunId: a run with ``run.id`` exists (nothing was written).
            IdempotencyConflict: the key came with a different request.
        """
        ...

    def replay(self, owner: str, idempotency: Idempotency, *, keep_seconds: float = 86400.0) -> RunRow | None:
        """The run ``owner``'s earlier submission with this key made (None: the key is new or expired).

        Raises:
            IdempotencyConflict: the key came with a different request.
        """
        ...

    def append_events(self, run_id: str, entries: Sequence[tuple[str, dict[str, Any]]], *,
                      holder: str | None = None) -> int:
        """Journal ``entries`` (kind, data) for the run, numbered on (with ``holder``: only while that
        worker runs it, so a worker whose run was taken over writes nothing more); the last number
        (0: nothing appended)."""
        ...

    def events(self, run_id: str, *, after: int, limit: int) -> list[RunEvent]:
        """The run's journal after number ``after``, oldest first, at most ``limit``."""
        ...

    def get(self, run_id: str) -> RunRow | None:
        """The run, or None."""
        ...

    def list_runs(self, *, owner: str | None, target: str | None, status: RunStatus | None, limit: int,
                  cursor: str | None, agent: str | None = None, text: str | None = None) -> RunPage:
        """Runs newest first, filtered (``owner`` None: everyone's; ``text``: a case-insensitive substring
        of the id, target, agent, owner or error); ``cursor`` from a previous page."""
        ...

    def claim(self, worker: str, lease_seconds: float) -> RunRow | None:
        """Atomically take the oldest queued run for ``worker`` (status running, leased); None if none."""
        ...

    def renew(self, worker: str, lease_seconds: float, run_ids: Collection[str]) -> int:
        """Extend ``worker``'s leases on ``run_ids`` (the runs it still works on); how many it renewed."""
        ...

    def expired(self) -> list[RunRow]:
        """Running runs whose lease has run out (their worker died or hangs)."""
        ...

    def running(self) -> list[RunRow]:
        """Every running run (a starting service looks for those its dead predecessor held)."""
        ...

    def take_over(self, run_id: str, dead_worker: str, *, requeue: bool, error: str = "",
                  force: bool = False) -> bool:
        """Atomically end ``dead_worker``'s hold of an expired run (any run of its, with ``force``:
        the worker is known dead): back to queued (``requeue``), else ended as ``error`` with
        ``error``. False when another worker got there first."""
        ...

    def release(self, run_id: str, worker: str) -> bool:
        """Give a running run back to the queue (a draining worker); False if not ``worker``'s."""
        ...

    def finish(self, run_id: str, worker: str, status: RunStatus, *, exit_code: int | None,
               summary: dict[str, Any] | None, error: str = "") -> bool:
        """Record the end of ``worker``'s run; False if the worker no longer holds it."""
        ...

    def requeue(self, run_id: str, *, quota: int) -> RunRow | None:
        """Queue an ended ``error`` or ``cancelled`` run again (to resume it); None if it is not one.

        Raises:
            QuotaExceeded: its owner has ``quota`` queued + running runs already.
        """
        ...

    def wait(self, run_id: str, worker: str, question: dict[str, Any] | None = None) -> bool:
        """``worker``'s run stopped, checkpointed, to wait for a reply (``question``, journaled): status
        waiting, no worker, no lease (nothing expires; it still counts against its owner's quota).
        False if not ``worker``'s."""
        ...

    def answer(self, run_id: str) -> RunRow | None:
        """A waiting run's reply has arrived: queue it (to resume); the row after, None if it was not waiting."""
        ...

    def cancel(self, run_id: str) -> RunRow | None:
        """Cancel a queued or waiting run at once, or ask the worker of a running one to stop; the row after."""
        ...

    def cancel_requested(self, worker: str) -> list[str]:
        """Ids of ``worker``'s running runs whose cancellation was asked for."""
        ...

    def upload_removed(self, run_id: str, *, kept_bytes: int = 0) -> bool:
        """The run's upload is gone from disk: it no longer counts against its owner's quotas, but
        ``kept_bytes`` (what the run kept of it, ``runs/<id>/kept/``) counts against the upload quota
        until the run is forgotten."""
        ...

    def held_uploads(self, *, ended_only: bool) -> list[str]:
        """Ids of the runs whose upload is still on disk (of ended runs only, with ``ended_only``)."""
        ...

    def forget_keys(self, *, older_than: float) -> int:
        """Delete idempotency keys made before ``older_than``; how many."""
        ...

    def stats(self, owner: str | None) -> dict[tuple[str, str, str], int]:
        """Runs per (agent, target, status), of ``owner`` (None: everyone's); checks
        (``options.kind`` "check") are not an agent's runs and are not counted."""
        ...

    def history(self, *, owner: str | None, agent: str | None, target: str | None, limit: int,
                cursor: str | None) -> RunPage:
        """Ended runs newest first (the execution history), filtered (``owner`` None: everyone's)."""
        ...

    def forget(self, *, target: str, agent: str | None) -> list[str]:
        """Delete the ended runs of ``target`` (of ``agent`` if given); their ids. Open runs stay."""
        ...

    def counts(self) -> dict[str, int]:
        """Runs per status."""
        ...

    def ping(self) -> None:
        """Raise :class:`StoreError` unless the store answers."""
        ...

    # tokens -----------------------------------------------------------------------------
    def add_token(self, name: str, token_hash: str, *, admin: bool) -> TokenRow:
        """Store a token's hash under ``name``.

        Raises:
            ConfigError: ``name`` exists already.
        """
        ...

    def remove_token(self, name: str) -> bool:
        """Remove the token ``name`` and its console sessions; False if there was none."""
        ...

    def tokens(self) -> list[TokenRow]:
        """Every token's name and rights."""
        ...

    def token_by_hash(self, token_hash: str) -> TokenRow | None:
        """The token whose hash is ``token_hash``, compared in constant time."""
        ...

    def has_tokens(self) -> bool:
        """Whether any token exists (then every request must carry one)."""
        ...

    # console sessions -------------------------------------------------------------------
    def add_session(self, session_hash: str, token_name: str, expires_at: float) -> None:
        """Keep a signed-in browser's session (its hash) for the token ``token_name`` until ``expires_at``;
        sessions that have expired are removed on the way."""
        ...

    def session_token(self, session_hash: str) -> TokenRow | None:
        """The token of the live session ``session_hash``: None if it is unknown, has expired, or its
        token was removed."""
        ...

    def remove_session(self, session_hash: str) -> None:
        """End the session ``session_hash`` (signing out); nothing if there is none."""
        ...
