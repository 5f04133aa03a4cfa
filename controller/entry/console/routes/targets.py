"""``/targets``: every target with its success rate; ``/targets/{agent}/{target}``: its charts,
failure kinds and lessons, and (admins) the Forget button."""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Path, Request
from fastapi.responses import RedirectResponse, Response

from agents.ports.errors import PlatformError
from agents.registry import AGENTS, agent_for_target
from agents.targets import known_targets
from controller.entry.console import forms
from controller.entry.console.routes.deps import Viewer
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.target_page import own_runs, target_view
from controller.entry.service.history import ADMIN_ONLY, delete_history
from controller.entry.service.problems import Problem
from controller.entry.service.stats import success_rate
from controller.platform.shared_state import lessons_of, run_history

router = APIRouter()
AgentName = Annotated[str, Path(min_length=1, max_length=64)]
TargetName = Annotated[str, Path(min_length=1, max_length=128)]


@router.get("/targets")
def targets(request: Request, who: Viewer) -> Response:
    """The service's targets and any other the viewer's runs used, with their runs per status."""
    state = state_of(request)
    grouped: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for (agent, target, status), count in state.store.stats(None if who.admin else who.name).items():
        grouped[(agent, target)][status] = count
    for name in known_targets(state.settings.data_dir):
        try:
            grouped.setdefault((agent_for_target(state.settings.data_dir, name).name, name), {})
        except PlatformError:
            continue
    rows = [(agent, target, runs, success_rate(runs)) for (agent, target), runs in sorted(grouped.items(),
                                                                                         key=lambda i: i[0][::-1])]
    return page(request, "targets.html", title="Targets", rows=rows, viewer=who)


@router.get("/targets/{agent}/{target}")
def target_page(agent: AgentName, target: TargetName, request: Request, who: Viewer) -> Response:
    """Success rate over time, attempts needed, failure kinds and the next run's lessons; counted over
    the viewer's own runs (an admin's: the whole history), as ``/targets`` counts them."""
    if agent not in AGENTS:
        raise Problem(404, f"no agent called {agent[:64]!r} (agents: {', '.join(sorted(AGENTS))})")
    state = state_of(request)
    own = None if who.admin else own_runs(state.store, who.name, agent, target)
    view = target_view(run_history(state.settings, state.store), lessons_of(state.settings, state.store),
                       agent, target, own)
    return page(request, "target.html", title=f"{target} ({agent})", view=view, viewer=who,
                forgotten=request.query_params.get("forgotten", ""))


@router.get("/targets/{agent}/{target}/forget")
def forget_form(agent: AgentName, target: TargetName, request: Request, who: Viewer) -> Response:
    """Ask before forgetting (a form, so it works without a script; admins only, as the forgetting)."""
    if not who.admin:
        raise Problem(403, ADMIN_ONLY)
    where = f"/targets/{quote(agent, safe='')}/{quote(target, safe='')}"
    return page(request, "confirm.html", title=f"Forget {target}?", viewer=who,
                question=f"Forget the lessons and ended service runs of {target} ({agent})?",
                consequence=("The next run on it starts without lessons, and its ended runs leave the runs list "
                             "and the API for good, with the code and expected results their pages kept. "
                             "The rest of the run folders and the metrics' history are kept."),
                action=f"{where}/forget", confirm_label="Forget them", back=where, back_label="Keep them")


@router.post("/targets/{agent}/{target}/forget")
async def forget(agent: AgentName, target: TargetName, request: Request, who: Viewer) -> Response:
    """Forget the target's lessons and ended service runs once confirmed (the API's ``DELETE /v1/history``;
    admins only); unconfirmed, the question."""
    form = await forms.posted(request)
    if forms.text(form, "confirm") != "yes":
        return forget_form(agent, target, request, who)
    done = delete_history(request, who, target=target, agent=agent)
    where = f"/targets/{quote(agent, safe='')}/{quote(target, safe='')}"
    return RedirectResponse(f"{where}?forgotten={done.lessons_failures + done.lessons_runs + done.service_runs}",
                            status_code=303)
