"""resume_line: what a resumed run skips, including a node that finished just before a kill.

LangGraph saves a node's writes as soon as it finishes and the next checkpoint after the
superstep; a process killed between the two leaves ``next`` empty with the finished task still
pending. That run has not ended and must resume (a SIGKILL in the resume integration test
landed there once). A run killed after its graph ended but before its summary was written
resumes too: nothing runs again and the agent summarises the final state.
"""

from __future__ import annotations

import contextlib
import operator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from agents.ports.errors import TargetError
from controller.runner.agent_runner import resume_line


class State(TypedDict):
    steps: Annotated[list[str], operator.add]


class Killed(BaseException):
    """The process dying: not an Exception, so LangGraph does not handle it."""


class DiesBeforeCheckpoint(InMemorySaver):
    """Saves writes, then 'dies' instead of saving the checkpoint that follows step ``at``."""

    def __init__(self, at: int | None) -> None:
        super().__init__()
        self.at = at

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        if self.at is not None and metadata.get("step") == self.at:
            raise Killed
        return super().put(config, checkpoint, metadata, new_versions)


def graph(saver: InMemorySaver) -> Any:
    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda _state, name=name: {"steps": [name]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=saver)


@dataclass
class FakeCheckpoint:
    saver: InMemorySaver
    thread_id: str = "run-1"

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}}


def interrupted(at: int | None) -> tuple[Any, FakeCheckpoint]:
    saver = DiesBeforeCheckpoint(at)
    checkpoint = FakeCheckpoint(saver)
    with contextlib.suppress(Killed):
        graph(saver).invoke({"steps": []}, checkpoint.config)
    saver.at = None
    agent = SimpleNamespace(graph=lambda _attempts, s: graph(s))
    return agent, checkpoint


def test_a_node_finished_before_the_kill_counts_as_done_and_the_run_resumes():
    agent, checkpoint = interrupted(at=2)  # b's writes saved, the checkpoint after b never written
    plan = SimpleNamespace(max_attempts=1)
    line = resume_line(agent, plan, checkpoint)  # type: ignore[arg-type]
    assert line.startswith("resuming run run-1:") and "next: the node after b" in line
    result = graph(checkpoint.saver).invoke(None, checkpoint.config)
    assert result["steps"] == ["a", "b", "c"]  # b did not run again


def test_a_graph_that_ended_resumes_to_its_final_state_and_nothing_runs_again():
    """Killed after the graph's last checkpoint but before summary.json (the chaos test hit it
    once): resuming must hand the agent the final state to summarise, not refuse the run, which
    the service then ended as an error."""
    agent, checkpoint = interrupted(at=None)
    line = resume_line(agent, SimpleNamespace(max_attempts=1), checkpoint)  # type: ignore[arg-type]
    assert line.startswith("resuming run run-1:") and "had ended" in line and "nothing runs again" in line
    ran: list[str] = []
    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda _state, name=name: ran.append(name) or {"steps": [name]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    chunks = list(builder.compile(checkpointer=checkpoint.saver).stream(None, checkpoint.config, stream_mode="values"))
    assert ran == [] and chunks[-1]["steps"] == ["a", "b", "c"]


def test_a_run_without_a_checkpoint_cannot_resume():
    checkpoint = FakeCheckpoint(InMemorySaver(), thread_id="run-2")
    agent = SimpleNamespace(graph=lambda _attempts, s: graph(s))
    with pytest.raises(TargetError, match="no checkpoint"):
        resume_line(agent, SimpleNamespace(max_attempts=1), checkpoint)  # type: ignore[arg-type]
