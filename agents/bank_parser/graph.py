"""The parser agent's graph (seed 000): analyze → generate → save → execute → compare →
refine → save → … → finalize, with pure routing functions.

Attempts are counted in state (``attempt``), never by LangGraph's recursion limit; the
recursion limit passed at invoke time is only a backstop. An attempt whose coder gave no
usable code (``no_code``, ``llm_error``) never reaches the sandbox: generate/refine route
straight to refine (or finalize at the limit).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.bank_parser import nodes
from agents.bank_parser.state import ParserContext, ParserState


def route_after_execute(state: ParserState, max_attempts: int) -> Literal["compare", "refine", "finalize"]:
    """Compare a parser that ran; retry one that failed while attempts remain."""
    if state["execution"].failure is None:
        return "compare"
    return "refine" if state["attempt"] < max_attempts else "finalize"


def route_after_compare(state: ParserState, max_attempts: int) -> Literal["refine", "finalize"]:
    """Finish on a pass (or when there is nothing to compare); retry a mismatch."""
    comparison = state.get("comparison")
    if comparison is None:  # no result.csv: self-consistency decides (issue 15)
        verification = state.get("verification")
        if verification is None or verification.self_consistent:
            return "finalize"
        return "refine" if state["attempt"] < max_attempts else "finalize"
    if comparison.passed:
        return "finalize"
    return "refine" if state["attempt"] < max_attempts else "finalize"


def route_after_coder(state: ParserState, max_attempts: int) -> Literal["save", "refine", "finalize"]:
    """After generate or refine: run the new candidate; if the coder gave no usable code
    (no code in the reply, the model failed), ask again while attempts remain; stop when
    the coder has nothing to try."""
    if state.get("exhausted"):
        return "finalize"
    if state.get("coder_failed"):
        return "refine" if state["attempt"] < max_attempts else "finalize"
    return "save"


def build_graph(max_attempts: int,
                checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent's graph for a given attempt limit (with a checkpointer: resumable)."""
    builder = StateGraph(ParserState, context_schema=ParserContext)
    for name in ("analyze", "generate", "save", "execute", "compare", "refine", "finalize"):
        builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, "analyze")
    builder.add_edge("analyze", "generate")
    builder.add_conditional_edges("generate", lambda s: route_after_coder(s, max_attempts),
                                  ["save", "refine", "finalize"])
    builder.add_edge("save", "execute")
    builder.add_conditional_edges("execute", lambda s: route_after_execute(s, max_attempts),
                                  ["compare", "refine", "finalize"])
    builder.add_conditional_edges("compare", lambda s: route_after_compare(s, max_attempts),
                                  ["refine", "finalize"])
    builder.add_conditional_edges("refine", lambda s: route_after_coder(s, max_attempts),
                                  ["save", "refine", "finalize"])
    builder.add_edge("finalize", END)
    return builder.compile(name="bank_parser", checkpointer=checkpointer)


def recursion_backstop(max_attempts: int) -> int:
    """A recursion limit comfortably above what ``max_attempts`` attempts can use."""
    return 10 + 5 * max_attempts
