"""The decision role, deterministic: the next node with a reason, or done.

Its whole input is :class:`~agents.intake.models.DecisionInput`: the goal, each node's
status (counts and field names, its declared priority, which of its goal keywords the goal
names), the previous node and the pending priority events. It never sees a reply or a
question (the seed's isolation; a test holds it to that). It reasons about the next best
node so:

1. a priority event (a job loss) sends the loop to the unfinished nodes that declare it
   (``x-priority-on``), the one of highest priority first;
2. otherwise the unfinished nodes are ranked: a node every conversation needs (``x-always``)
   first, then the nodes the goal names (more of their goal keywords first), then the rest;
   within each, the higher ``x-priority``, then the target's order;
3. when none is left, done.

The reason says which rule chose the node and what it still needs.
"""

from __future__ import annotations

from agents.intake.models import Decision, DecisionInput, NodeStatus


def decide(inp: DecisionInput) -> Decision:
    """Where to go next (see the module doc)."""
    unfinished = [node for node in inp.nodes if node.pending > 0]
    for event in reversed(inp.priority_events):  # the latest shift first
        urgent = [node for node in unfinished if event in node.priority_on]
        if urgent:
            chosen = ranked(urgent)[0]
            return Decision(chosen.name, f"priority shift ({event}): {chosen.name} first; {_why(chosen)}")
    if not unfinished:
        return Decision(None, _done(inp.nodes), visited_all=True)
    chosen = ranked(unfinished)[0]
    return Decision(chosen.name, f"{_because(chosen, inp.goal)}; {_why(chosen)}")


def ranked(nodes: list[NodeStatus]) -> list[NodeStatus]:
    """``nodes`` best first: always-needed, then named by the goal, then by priority (stable)."""
    return sorted(nodes, key=lambda n: (not n.always, -len(n.goal_terms), -n.priority))


def _because(node: NodeStatus, goal: str) -> str:
    if node.always:
        return f"{node.name} next: every conversation needs it (priority {node.priority})"
    if node.goal_terms:
        terms = ", ".join(repr(t) for t in node.goal_terms[:3])
        return f"{node.name} next: the goal ({goal[:60]}) speaks of {terms} (priority {node.priority})"
    return f"{node.name} next: the goal names no other node left; it has the highest priority ({node.priority})"


def _why(node: NodeStatus) -> str:
    if node.open_conflicts:
        return f"it has {node.open_conflicts} conflict(s) to confirm"
    missing = ", ".join(node.missing_required[:4])
    return f"it still needs {missing}" if missing else "it has questions left"


def _done(nodes: tuple[NodeStatus, ...]) -> str:
    gaps = [f"{node.name}.{field}" for node in nodes for field in node.missing_required]
    if gaps:
        return f"nothing left to ask; unanswered: {', '.join(gaps[:6])}"
    return "every node collected: each required field filled or skipped"
