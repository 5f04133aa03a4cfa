"""Run statuses: the one table every list of statuses is derived from (issue 41).

An agent ends a run with a *verdict* (summary.json's ``status``); the platform adds ``error``
(the machine's or sandloop's fault, never a verdict); the service's queue adds the states a run
passes through before it ends, and ``cancelled``. The run history and ``/metrics``, the CLI's
exit code, ``--all``'s table, the service's run status (and its OpenAPI enum) and the console's
badges all read :data:`STATUSES`; ``tests/unit/test_statuses.py`` checks each of them.

To add a status: add its :class:`Status` row below and, when the service's run row can hold it,
its name to :data:`RunStatus` (a ``Literal``, so mypy and the OpenAPI enum see it; the module
refuses to import when the two disagree), and give it a badge colour in the console's CSS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Kind = Literal["verdict", "fault", "queue", "stopped"]
#: How a success rate counts a status: a success, a failure, or not at all (no verdict on the work).
Outcome = Literal["success", "failure", "none"]


@dataclass(frozen=True)
class Status:
    """One status a run can have."""

    name: str
    kind: Kind
    """``verdict``: an agent's (summary.json); ``fault``: the run broke; ``queue``: on the service's
    way to an end; ``stopped``: the service stopped it on request."""
    exit_code: int | None
    """The CLI's exit status for a run that ended so (None: not an end)."""
    outcome: Outcome
    stored_as: str
    """What the service's run row says once the run ends so (a pass of any kind is ``passed``)."""
    meaning: str


STATUSES: tuple[Status, ...] = (
    Status("passed", "verdict", 0, "success", "passed", "the work passed its checks"),
    Status("self-consistent", "verdict", 0, "success", "passed",
           "no expected result to compare; the work agrees with its input's own figures"),
    Status("unverified", "verdict", 0, "none", "passed", "the work ran but nothing could check it"),
    Status("failed", "verdict", 1, "failure", "failed", "the agent gave up: every attempt failed its checks"),
    Status("incomplete", "verdict", 1, "none", "incomplete",
           "the conversation ended, but the person could not answer some fields (listed as not understood)"),
    Status("no-go", "verdict", 1, "none", "no-go",
           "the agent decided not to go on: its inputs cannot support the work (one line says why)"),
    Status("error", "fault", 3, "none", "error", "the run broke (the machine's or sandloop's fault)"),
    Status("queued", "queue", None, "none", "queued", "waiting for a worker"),
    Status("running", "queue", None, "none", "running", "a worker runs it"),
    Status("waiting", "queue", None, "none", "waiting", "checkpointed, waiting for a reply"),
    Status("cancelled", "stopped", 130, "none", "cancelled", "stopped on request"),
)

BY_NAME: dict[str, Status] = {s.name: s for s in STATUSES}
#: What an agent may end a run with (summary.json's ``status``).
VERDICTS: tuple[str, ...] = tuple(s.name for s in STATUSES if s.kind == "verdict")
#: What a finished run is recorded with in the run history (bounded: they label metrics).
FINAL: tuple[str, ...] = (*VERDICTS, *(s.name for s in STATUSES if s.kind == "fault"))
#: Verdicts the CLI exits 0 for.
OK: frozenset[str] = frozenset(s.name for s in STATUSES if s.kind == "verdict" and s.exit_code == 0)
#: The CLI's exit status per final status.
EXIT_CODES: dict[str, int] = {name: BY_NAME[name].exit_code or 0 for name in FINAL}
#: Statuses a success rate counts as a success, and as a failure (the others it leaves out).
SUCCESS: frozenset[str] = frozenset(s.name for s in STATUSES if s.outcome == "success")
FAILURE: frozenset[str] = frozenset(s.name for s in STATUSES if s.outcome == "failure")

#: The status of a service's run row (the API's ``status`` and its OpenAPI enum).
RunStatus = Literal["queued", "running", "waiting", "passed", "failed", "incomplete", "no-go", "error", "cancelled"]
#: Every status a run row can hold.
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)
#: Run-row statuses that hold an agent's verdict (the run's exit code is the CLI's).
VERDICT_ROWS: frozenset[str] = frozenset(s.stored_as for s in STATUSES if s.kind == "verdict")
#: A run row that has ended; nothing changes it any more.
TERMINAL: frozenset[str] = frozenset(s.stored_as for s in STATUSES if s.kind != "queue")
#: A run row that counts against its owner's quota: on its way, or checkpointed waiting for a reply.
OPEN: frozenset[str] = frozenset(s.name for s in STATUSES if s.kind == "queue")


def stored_status(verdict: str) -> str:
    """The run row's status for a run that ended with ``verdict`` (an unknown one: ``error``)."""
    status = BY_NAME.get(verdict)
    return status.stored_as if status is not None and status.kind in ("verdict", "fault") else "error"


def _check() -> None:
    """The ``Literal`` and the table must name the same run-row statuses (a status added to one only)."""
    stored = {s.stored_as for s in STATUSES}
    if stored != set(RUN_STATUSES):
        raise ImportError(f"RunStatus {sorted(RUN_STATUSES)} and STATUSES' stored_as {sorted(stored)} disagree")


_check()
