"""The blueprint agent's graph (seed 003): manager → researcher → manager → writer → qa →
finish | writer (a retry with QA's feedback) | partial (the retry limit: partial output); either
manager pass may end at stop (the manager's no-go).

The manager is one node visited twice; the pure router :func:`after_manager` sends it to the
researcher before there are findings and to the writer after. QA's decision is the pure
router :func:`after_qa`. Attempts are counted in state, never by LangGraph's recursion
limit, which is only a backstop.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.blueprint import nodes
from agents.blueprint.state import BlueprintContext, BlueprintState

NODES = ("manager", "researcher", "writer", "qa", "finish", "partial", "stop")


def after_manager(state: BlueprintState) -> Literal["researcher", "writer", "stop"]:
    """A no-go stops; research first; once the findings are in, write."""
    if state.get("no_go"):
        return "stop"
    return "writer" if "findings" in state else "researcher"


def after_qa(state: BlueprintState, max_attempts: int) -> Literal["finish", "writer", "partial"]:
    """A passing report finishes; a failing one is rewritten until the attempts run out."""
    if state["verdict"]["passed"]:
        return "finish"
    return "partial" if state["attempt"] >= max_attempts else "writer"


def build_graph(max_attempts: int, checkpointer: BaseCheckpointSaver[Any] | None = None
                ) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent's graph for a given attempt limit (with a checkpointer: resumable)."""
    builder = StateGraph(BlueprintState, context_schema=BlueprintContext)
    for name in NODES:
        builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, "manager")
    builder.add_conditional_edges("manager", after_manager, ["researcher", "writer", "stop"])
    builder.add_edge("researcher", "manager")
    builder.add_edge("writer", "qa")
    builder.add_conditional_edges("qa", lambda s: after_qa(s, max_attempts), ["finish", "writer", "partial"])
    builder.add_edge("finish", END)
    builder.add_edge("partial", END)
    builder.add_edge("stop", END)
    return builder.compile(name="blueprint", checkpointer=checkpointer)


def recursion_backstop(max_attempts: int) -> int:
    """A recursion limit comfortably above what ``max_attempts`` writer attempts can use."""
    return 10 + 3 * max_attempts
