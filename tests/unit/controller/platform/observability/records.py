"""Run records for the observability unit tests (plain data, nothing mocked)."""

from __future__ import annotations

import itertools

from controller.platform.observability.history import NodeRecord, RunRecord, SandboxRecord

_ids = itertools.count(1)


def run(status: str = "passed", *, agent: str = "bank_parser", target: str = "icici", attempts: int = 1,
        failures: tuple[str, ...] = (), seconds: float = 4.0, finished_at: float = 1_000_000.0,
        sandbox: tuple[tuple[str, float], ...] = (("ok", 2.0),)) -> RunRecord:
    """A run record with one node per step and the given sandbox executions."""
    return RunRecord(
        run_id=f"r{next(_ids)}", agent=agent, target=target, status=status, attempts=attempts,
        max_attempts=3, started_at=finished_at - seconds, finished_at=finished_at,
        duration_seconds=seconds, sandbox_seconds=sum(s for _, s in sandbox), coder="offline",
        failures=failures,
        nodes=(NodeRecord("analyze", 0, "ok", 0.7), NodeRecord("execute", 1, "ok", 2.0)),
        sandbox=tuple(SandboxRecord("sandloop/python-parser", "sandloop/python-parser:abc", o, s, 0, i)
                      for i, (o, s) in enumerate(sandbox, 1)),
    )
