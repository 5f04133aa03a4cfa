"""The roles' narrow inputs, built from the graph memory: one node and the conversation so far for
the info role, structured statuses for the decision role. Each role gets only what its view holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agents.intake.catalogue import goal_terms
from agents.intake.info import CONVERSATION_TURNS, InfoInput, open_questions
from agents.intake.memory import GraphMemory
from agents.intake.models import DecisionInput, NodeStatus, Scalar
from agents.intake.target import IntakeTarget


@dataclass(frozen=True)
class _Held:
    """What the memory holds, read once for every node a view is built of."""

    values: dict[str, dict[str, Scalar | None]]
    skipped: list[tuple[str, str]]
    conflicts: list[dict[str, Any]]
    cleared: list[tuple[str, str]]
    updated_at: dict[tuple[str, str], str]
    now: datetime
    turns: tuple[dict[str, Any], ...]

    @classmethod
    def read(cls, memory: GraphMemory) -> _Held:
        return cls(memory.get_all_nodes_data(), list(memory.skipped()), list(memory.conflicts(open_only=True)),
                   list(memory.cleared()), dict(memory.updated_at()), memory.now(), conversation(memory))


def info_input(target: IntakeTarget, memory: GraphMemory, node: str, asked: list[str]) -> InfoInput:
    """What the info role sees of ``node``: its schema, values, skips, open conflicts, stale values,
    asked keys and the latest turns of the conversation."""
    return _info_input(target, _Held.read(memory), node, asked)


def _info_input(target: IntakeTarget, held: _Held, node: str, asked: list[str]) -> InfoInput:
    return InfoInput(node, target.schemas[node], held.values.get(node, {}),
                     frozenset(field for n, field in held.skipped if n == node),
                     tuple(c for c in held.conflicts if c["node"] == node), frozenset(asked),
                     _stale_fields(target, held, node), held.turns,
                     cleared=frozenset(field for n, field in held.cleared if n == node))


def _stale_fields(target: IntakeTarget, held: _Held, node: str) -> tuple[tuple[str, str], ...]:
    """The node's held fields given longer ago than their freshness, with the day they were given."""
    schema = target.schemas[node]
    out = []
    for (held_node, name), at in sorted(held.updated_at.items()):
        days = schema.freshness(name) if held_node == node and name in schema.properties else None
        if days is not None and held.now - datetime.fromisoformat(at) > timedelta(days=days):
            out.append((name, at[:10]))
    return tuple(out)


def conversation(memory: GraphMemory) -> tuple[dict[str, Any], ...]:
    """The latest turns, as the info role is given them: question, reply, understood, refused."""
    turns = memory.transcript()[-CONVERSATION_TURNS:]
    return tuple({"question": t["question"], "reply": t["reply"], "understood": t["resolution"]["reasoning"],
                  "rejected": t["resolution"].get("rejected", []), "unsure": t["resolution"].get("unsure", [])}
                 for t in turns)


def decision_input(target: IntakeTarget, memory: GraphMemory, previous: str, asked: list[str],
                   priority: list[str]) -> DecisionInput:
    """What the decision role sees: the goal, each node's status and data, the previous node, events."""
    statuses, held = [], _Held.read(memory)
    for node in target.nodes:
        view = _info_input(target, held, node, asked)
        schema = view.schema
        missing = tuple(f for f in schema.required if view.values.get(f) is None and f not in view.skipped)
        statuses.append(NodeStatus(node, sum(v is not None for v in view.values.values()), missing,
                                   len(view.open_conflicts), len(open_questions(view)), tuple(schema.priority_on),
                                   schema.priority, tuple(goal_terms(schema, target.goal)), schema.always))
    return DecisionInput(target.goal, tuple(statuses), previous, tuple(dict.fromkeys(priority)),
                         held.values)
