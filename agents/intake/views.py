"""The roles' narrow inputs, built from the graph memory: one node for the info role,
structured statuses for the decision role. Each role gets only what its view holds."""

from __future__ import annotations

from agents.intake.info import InfoInput, open_questions
from agents.intake.memory import GraphMemory
from agents.intake.models import DecisionInput, NodeStatus
from agents.intake.target import IntakeTarget


def info_input(target: IntakeTarget, memory: GraphMemory, node: str, asked: list[str]) -> InfoInput:
    """What the info role sees of ``node``: its schema, values, skips, open conflicts, asked keys."""
    values = memory.get_all_nodes_data().get(node, {})
    skipped = frozenset(field for n, field in memory.skipped() if n == node)
    conflicts = tuple(c for c in memory.conflicts(open_only=True) if c["node"] == node)
    return InfoInput(node, target.schemas[node], values, skipped, conflicts, frozenset(asked))


def decision_input(target: IntakeTarget, memory: GraphMemory, previous: str, asked: list[str],
                   priority: list[str]) -> DecisionInput:
    """What the decision role sees: the goal, each node's status and data, the previous node, events."""
    statuses = []
    for node in target.nodes:
        view = info_input(target, memory, node, asked)
        missing = tuple(f for f in view.schema.required if view.values.get(f) is None and f not in view.skipped)
        statuses.append(NodeStatus(node, sum(v is not None for v in view.values.values()), missing,
                                   len(view.open_conflicts), len(open_questions(view)),
                                   tuple(view.schema.priority_on)))
    return DecisionInput(target.goal, tuple(statuses), previous, tuple(dict.fromkeys(priority)),
                         memory.get_all_nodes_data())
