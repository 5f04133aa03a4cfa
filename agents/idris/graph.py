"""The Idris agent's graph (seed 004): analyze → generate → save → typecheck → decision →
finish | fail | fix → save → typecheck → …

The seed's node 4 ("Decision") is the pure router :func:`decide`; its three answers are
the seed's ``finish``/``fail``/``fix_error``. Attempts (checks) are counted in state,
never by LangGraph's recursion limit, which is only a backstop.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.idris import nodes
from agents.idris.state import IdrisContext, IdrisState

Decision = Literal["finish", "fail", "fix"]


def decide(state: IdrisState, max_attempts: int) -> Decision:
    """Success finishes; a failure at the attempt limit fails; any other failure is fixed."""
    if state["check"].outcome == "passed":
        return "finish"
    return "fail" if state["attempt"] >= max_attempts else "fix"


def route_after_fix(state: IdrisState) -> Literal["save", "fail"]:
    """Check the repaired module, unless the coder had nothing new."""
    return "fail" if state.get("exhausted") else "save"


def build_graph(max_attempts: int,
                checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent's graph for a given attempt limit (with a checkpointer: resumable)."""
    builder = StateGraph(IdrisState, context_schema=IdrisContext)
    for name in ("analyze", "generate", "save", "typecheck", "fix", "finish", "fail"):
        builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, "analyze")
    builder.add_edge("analyze", "generate")
    builder.add_edge("generate", "save")
    builder.add_edge("save", "typecheck")
    builder.add_conditional_edges("typecheck", lambda s: decide(s, max_attempts), ["finish", "fail", "fix"])
    builder.add_conditional_edges("fix", route_after_fix, ["save", "fail"])
    builder.add_edge("finish", END)
    builder.add_edge("fail", END)
    return builder.compile(name="idris", checkpointer=checkpointer)


def recursion_backstop(max_attempts: int) -> int:
    """A recursion limit comfortably above what ``max_attempts`` checks can use."""
    return 10 + 4 * max_attempts
