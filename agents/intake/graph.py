"""The intake agent's graph (seed 002's orchestrator as LangGraph):

    analyze → ask ─┬─ (question) → listen ─┬─ (reply) → resolve ─┬─ (no shift) → ask
                   │                       └─ (no reply) → finish └─ (priority shift) → decide
                   └─ (complete) → decide ─┬─ (next node) → ask
                                           └─ (done) → finish

Routers are pure functions of the state. Turns are counted in state (one per reply, bounded
by the script and ``max_turns``); LangGraph's recursion limit is only a backstop.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.intake import nodes
from agents.intake.state import IntakeContext, IntakeState


def after_ask(state: IntakeState) -> Literal["listen", "decide"]:
    """A question waits for a reply; a complete node goes to the decision role."""
    return "listen" if state.get("question") else "decide"


def after_listen(state: IntakeState) -> Literal["resolve", "finish"]:
    """A reply is resolved; no reply left ends the conversation."""
    return "finish" if state.get("out_of_replies") else "resolve"


def after_resolve(state: IntakeState) -> Literal["ask", "decide"]:
    """A priority shift replans at once; otherwise the info role goes on."""
    return "decide" if state.get("shift") else "ask"


def after_decide(state: IntakeState) -> Literal["ask", "finish"]:
    """Done finishes; a next node is asked about."""
    return "finish" if state.get("visited_all") else "ask"


def build_graph(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent's graph (with a checkpointer: resumable mid-conversation)."""
    builder = StateGraph(IntakeState, context_schema=IntakeContext)
    for name in ("analyze", "ask", "listen", "resolve", "decide", "finish"):
        builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, "analyze")
    builder.add_edge("analyze", "ask")
    builder.add_conditional_edges("ask", after_ask, ["listen", "decide"])
    builder.add_conditional_edges("listen", after_listen, ["resolve", "finish"])
    builder.add_conditional_edges("resolve", after_resolve, ["ask", "decide"])
    builder.add_conditional_edges("decide", after_decide, ["ask", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(name="intake", checkpointer=checkpointer)


def recursion_backstop(max_turns: int, nodes_count: int) -> int:
    """A recursion limit above what ``max_turns`` replies over ``nodes_count`` nodes can use: per
    turn at most listen, resolve, decide (a shift), ask (complete), decide, ask."""
    return 20 + 6 * max_turns + 3 * nodes_count
