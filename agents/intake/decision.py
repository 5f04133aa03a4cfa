"""The decision role, deterministic: the next node with a reason, or done.

Its whole input is :class:`~agents.intake.models.DecisionInput`: the goal, each node's
status (counts and field names), the previous node and the pending priority events. It
never sees a reply or a question (the seed's isolation; a test holds it to that). Rules: a
priority event sends the loop to the first unfinished node that declares it
(``x-priority-on``); otherwise the first unfinished node in the target's order; when none is
left, done.
"""

from __future__ import annotations

from agents.intake.models import Decision, DecisionInput, NodeStatus


def decide(inp: DecisionInput) -> Decision:
    """Where to go next (see the module doc)."""
    unfinished = [node for node in inp.nodes if node.pending > 0]
    for event in reversed(inp.priority_events):  # the latest shift first
        urgent = next((node for node in unfinished if event in node.priority_on), None)
        if urgent is not None:
            return Decision(urgent.name, f"priority shift ({event}): {urgent.name} first; {_why(urgent)}")
    if not unfinished:
        return Decision(None, _done(inp.nodes), visited_all=True)
    chosen = unfinished[0]
    return Decision(chosen.name, f"{_why(chosen)} (goal: {inp.goal[:80]})")


def _why(node: NodeStatus) -> str:
    if node.open_conflicts:
        return f"{node.name} has {node.open_conflicts} conflict(s) to confirm"
    missing = ", ".join(node.missing_required[:4])
    return f"{node.name} still needs {missing}" if missing else f"{node.name} has questions left"


def _done(nodes: tuple[NodeStatus, ...]) -> str:
    gaps = [f"{node.name}.{field}" for node in nodes for field in node.missing_required]
    if gaps:
        return f"nothing left to ask; unanswered: {', '.join(gaps[:6])}"
    return "every node collected: each required field filled or skipped"
