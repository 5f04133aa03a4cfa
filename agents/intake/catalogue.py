"""The node registry: the seed's 16 nodes, shipped once, discovered by their files; a target's own.

    agents/intake/node_schemas/<Node>.json   the shipped nodes (Personal, Income, ... Retirement)
    data/<target>/nodes/<Node>.json|.toml    a target's own: a node added, or a shipped one overridden

Nothing lists the nodes by hand: a schema file is a node. A target either names the nodes it
collects (``nodes = [...]`` in target.toml) or lets its goal choose them (:func:`chosen_by_goal`):
the nodes marked ``x-always``, and every node one of whose ``x-goal-keywords`` starts a word of
the goal; a goal that matches none gets the four nodes of highest ``x-priority`` besides.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from agents.intake.schema import NODES_DIR, NodeSchema, load_schema
from agents.ports.errors import ConfigError

SHIPPED = Path(__file__).resolve().parent / "node_schemas"
#: Most nodes a goal may choose (the decision role orders them; a long intake tires a person).
MAX_CHOSEN = 8
_NODE_FILE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}\.(?:json|toml)$")


def node_names(folder: Path) -> list[str]:
    """The nodes whose schema files ``folder`` holds (sorted; other files are ignored)."""
    if not folder.is_dir():
        return []
    return sorted({p.stem for p in folder.iterdir() if p.is_file() and _NODE_FILE.match(p.name)})


@lru_cache(maxsize=1)
def shipped() -> dict[str, NodeSchema]:
    """The shipped nodes, each validated once per process."""
    return {name: load_schema(SHIPPED, name) for name in node_names(SHIPPED)}


def available(target_folder: Path) -> dict[str, NodeSchema]:
    """Every node a target can use: the shipped ones, then its own (``nodes/``), which win by name.

    Raises:
        ConfigError: one of the target's schema files does not validate.
    """
    own = target_folder / NODES_DIR
    return {**shipped(), **{name: load_schema(own, name) for name in node_names(own)}}


def select(nodes: dict[str, NodeSchema], named: list[str] | None, goal: str) -> list[str]:
    """The nodes a target collects: those it names (each must exist), else those its goal chooses.

    Raises:
        ConfigError: a named node that is neither shipped nor the target's own.
    """
    if named is None:
        return chosen_by_goal(nodes, goal)
    unknown = [name for name in named if name not in nodes]
    if unknown:
        raise ConfigError(f"node {unknown[0]} is neither a shipped node nor one of the target's nodes/"
                          f"{unknown[0]}.json", hint=f"shipped nodes: {', '.join(sorted(shipped()))}")
    return list(named)


def goal_terms(schema: NodeSchema, goal: str) -> list[str]:
    """The node's goal keywords that start a word of ``goal`` ("retire" matches "retirement")."""
    text = goal.lower()
    return [word for word in schema.goal_keywords if re.search(rf"\b{re.escape(word)}", text)]


def chosen_by_goal(nodes: dict[str, NodeSchema], goal: str) -> list[str]:
    """The nodes ``goal`` needs (see the module doc), at most :data:`MAX_CHOSEN`, by priority."""
    by_priority = sorted(nodes, key=lambda name: (-nodes[name].priority, name))
    always = [name for name in by_priority if nodes[name].always]
    matched = [name for name in by_priority if not nodes[name].always and goal_terms(nodes[name], goal)]
    if not matched:
        matched = [name for name in by_priority if not nodes[name].always][:4]
    return (always + matched)[:MAX_CHOSEN]
