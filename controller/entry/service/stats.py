"""``GET /v1/stats``: success rates per agent and target, of the runs this service ran.

Counted from the service's run store, so a token sees the numbers of its own runs only (an
admin: everyone's). Runs made with the CLI are not in it; the exporter's /metrics and the
dashboard count those too, from the run history.
"""

from __future__ import annotations

from collections import defaultdict

from fastapi import APIRouter, Request

from controller.entry.service.auth import Caller
from controller.entry.service.schemas import PROBLEMS, Stats, TargetStats
from controller.entry.service.state import state_of

router = APIRouter(prefix="/v1", tags=["stats"], responses=PROBLEMS)


@router.get("/stats", response_model=Stats, summary="Success rates per agent and target")
def get_stats(request: Request, caller: Caller) -> Stats:
    """Runs per status and the success rate, per agent and target."""
    state = state_of(request)
    grouped: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for (agent, target, status), count in state.store.stats(None if caller.admin else caller.name).items():
        grouped[(agent, target)][status] = count
    return Stats(targets=[TargetStats(agent=agent, target=target, runs=runs, success_rate=success_rate(runs))
                          for (agent, target), runs in sorted(grouped.items())])


def success_rate(runs: dict[str, int]) -> float | None:
    """passed / (passed + failed); None before any verdict."""
    verdicts = runs.get("passed", 0) + runs.get("failed", 0)
    return None if verdicts == 0 else runs.get("passed", 0) / verdicts
