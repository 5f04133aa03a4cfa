"""The known mix of runs the dashboard test makes, and what each panel must then show.

Runs are written straight into the history through its API (the exporter's input), some
passing and some failing by construction; one more real run goes through the CLI. The
expected numbers are worked out here from the planned runs alone (not through the code
under test), with the rules the docs state: success rate = passed / (passed + failed);
a failed attempt is a retry when another attempt followed it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from controller.platform.observability.history import NodeRecord, RunRecord, SandboxRecord

IMAGE = "sandloop/python-parser"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Planned:
    """One run to record: its outcome, failures, wall time and sandbox executions."""

    agent: str
    target: str
    status: str
    attempts: int
    failures: tuple[str, ...]
    seconds: float
    sandbox: tuple[tuple[str, float], ...]

    def record(self, finished_at: float) -> RunRecord:
        run_id = f"test-{next(_ids):04d}-{self.target}"
        nodes = [NodeRecord("analyze", 0, "ok", 0.8), NodeRecord("generate", 1, "ok", 0.1)]
        nodes += [NodeRecord("execute", i, outcome, s) for i, (outcome, s) in enumerate(self.sandbox, 1)]
        nodes.append(NodeRecord("finalize", self.attempts, self.status, 0.001))
        return RunRecord(
            run_id=run_id, agent=self.agent, target=self.target, status=self.status,
            attempts=self.attempts, max_attempts=3, started_at=finished_at - self.seconds,
            finished_at=finished_at, duration_seconds=self.seconds,
            sandbox_seconds=sum(s for _, s in self.sandbox), coder="test", failures=self.failures,
            nodes=tuple(nodes),
            sandbox=tuple(SandboxRecord(IMAGE, f"{IMAGE}:test", outcome, s, None, i)
                          for i, (outcome, s) in enumerate(self.sandbox, 1)),
        )


#: Recorded before the exporter starts (Prometheus never sees them arrive).
BEFORE_SCRAPING = (
    Planned("bank_parser", "alpha", "passed", 1, (), 4.0, (("ok", 2.2),)),
    Planned("toy", "beta", "failed", 2, ("mismatch", "mismatch"), 12.0, (("ok", 2.0), ("ok", 2.4))),
)

#: Recorded while Prometheus scrapes.
WHILE_SCRAPING = (
    Planned("bank_parser", "alpha", "passed", 1, (), 3.0, (("ok", 2.1),)),
    Planned("bank_parser", "alpha", "passed", 2, ("mismatch",), 7.0, (("ok", 2.3), ("ok", 2.6))),
    Planned("bank_parser", "alpha", "passed", 3, ("execution_error", "timeout"), 45.0,
            (("nonzero_exit", 1.2), ("timeout", 31.0), ("ok", 2.5))),
    Planned("bank_parser", "alpha", "failed", 3, ("type_error", "mismatch", "mismatch"), 15.0,
            (("ok", 2.0), ("ok", 2.2), ("ok", 2.4))),
    Planned("bank_parser", "beta", "passed", 2, ("oom",), 9.0, (("oom", 4.0), ("ok", 2.2))),
    Planned("bank_parser", "beta", "failed", 2, ("llm_error", "timeout"), 40.0, (("timeout", 31.0),)),
    Planned("bank_parser", "beta", "failed", 1, ("mismatch",), 5.0, (("ok", 2.1),)),
    Planned("bank_parser", "beta", "error", 1, (), 3.5, (("engine_error", 0.4),)),
    Planned("bank_parser", "gamma", "failed", 3, ("execution_error",) * 3, 8.0, (("nonzero_exit", 1.0),) * 3),
    Planned("bank_parser", "gamma", "failed", 2, ("oom", "oom"), 10.0, (("oom", 4.1), ("oom", 4.2))),
    Planned("bank_parser", "gamma", "self-consistent", 1, (), 4.0, (("ok", 2.0),)),
    Planned("bank_parser", "delta", "unverified", 1, (), 3.0, (("ok", 2.0),)),
    Planned("toy", "beta", "passed", 1, (), 2.0, (("ok", 1.5),)),
)

#: Target folders the exporter knows from its data dir (icici is the real CLI run's).
TARGETS = ("alpha", "beta", "gamma", "delta", "icici")


def success_rate(runs: Iterable[RunRecord], **where: str) -> Fraction | None:
    """Verified passes / verified runs matching ``where``; None when there are none.

    A self-consistent run (no result.csv, the statement's own figures hold) is a verified pass.
    """
    chosen = [r for r in runs if all(getattr(r, k) == v for k, v in where.items())]
    passed = sum(r.status in ("passed", "self-consistent") for r in chosen)
    verified = sum(r.status in ("passed", "self-consistent", "failed") for r in chosen)
    return Fraction(passed, verified) if verified else None


def rates_by_agent_target(runs: Sequence[RunRecord]) -> dict[tuple[str, str], float]:
    """Success rate per (agent, target) that has any verified run."""
    pairs = {(r.agent, r.target) for r in runs}
    rates = {pair: success_rate(runs, agent=pair[0], target=pair[1]) for pair in pairs}
    return {pair: float(rate) for pair, rate in rates.items() if rate is not None}


def status_counts(runs: Iterable[RunRecord]) -> dict[str, int]:
    return dict(Counter(r.status for r in runs))


def retry_counts(runs: Iterable[RunRecord]) -> dict[str, int]:
    """Failure kinds of every failed attempt that another attempt followed."""
    counts: Counter[str] = Counter()
    for run in runs:
        counts.update(run.failures[: max(run.attempts - 1, 0)])
    return dict(counts)


def sandbox_outcomes(runs: Iterable[RunRecord]) -> dict[str, int]:
    return dict(Counter(s.outcome for r in runs for s in r.sandbox))


def mean_attempts(runs: Sequence[RunRecord]) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for run in runs:
        groups[(run.agent, run.target)].append(run.attempts)
    return {key: sum(v) / len(v) for key, v in groups.items()}


def histogram_quantile(q: float, observations: Sequence[float], bounds: Sequence[float]) -> float:
    """Prometheus' histogram_quantile over the buckets ``observations`` fall in.

    Linear interpolation inside the bucket that holds the rank; the lowest bucket starts at
    0; a rank in the +Inf bucket answers the highest finite bound.
    """
    cumulative = [sum(o <= b for o in observations) for b in bounds] + [len(observations)]
    uppers = [*bounds, math.inf]
    rank = q * cumulative[-1]
    index = next(i for i, c in enumerate(cumulative) if c >= rank)
    if uppers[index] == math.inf:
        return float(bounds[-1])
    start = 0.0 if index == 0 else float(uppers[index - 1])
    below = 0 if index == 0 else cumulative[index - 1]
    return start + (uppers[index] - start) * ((rank - below) / (cumulative[index] - below))
