"""Issue 42: a run's process whose claim was taken over cannot commit a node's result.

Before, a run's process that outlived its service went on executing and committing while the
run's new holder ran the same node: the journal held ``node execute attempt 1`` twice.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from controller.platform.checkpoints import close_checkpoint, open_checkpoint
from controller.platform.fence import (
    CLAIM_FILE,
    FencedSaver,
    current_token,
    read_fence,
    write_claim,
)
from controller.platform.stop import Stopped, StopSwitch


class State(TypedDict):
    done: Annotated[list[str], operator.add]


def two_nodes(on_first: object) -> StateGraph:
    builder = StateGraph(State)
    builder.add_node("first", lambda state: (on_first(), {"done": ["first"]})[1])  # type: ignore[operator]
    builder.add_node("second", lambda state: {"done": ["second"]})
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder


def test_a_claim_taken_over_mid_node_refuses_the_nodes_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_claim(tmp_path, 0)
    switch = StopSwitch()
    monkeypatch.setattr("controller.platform.checkpoints.read_fence", lambda run_dir: read_fence(run_dir, switch))
    checkpoint = open_checkpoint(tmp_path, "r1", [State], resume=False)
    assert isinstance(checkpoint.saver, FencedSaver)
    graph = two_nodes(lambda: write_claim(tmp_path, 1)).compile(checkpointer=checkpoint.saver)
    with pytest.raises(Stopped):
        graph.invoke({"done": []}, checkpoint.config, durability="sync")
    assert switch.stopped and switch.reason == "fenced"
    values = graph.get_state(checkpoint.config).values
    assert "first" not in values.get("done", [])  # the stale holder's result never reached the checkpoint
    close_checkpoint(checkpoint)


def test_the_current_holder_commits_every_node(tmp_path: Path):
    write_claim(tmp_path, 3)
    checkpoint = open_checkpoint(tmp_path, "r1", [State], resume=False)
    graph = two_nodes(lambda: None).compile(checkpointer=checkpoint.saver)
    assert graph.invoke({"done": []}, checkpoint.config, durability="sync")["done"] == ["first", "second"]
    close_checkpoint(checkpoint)


def test_a_run_without_a_claim_file_is_not_fenced(tmp_path: Path):
    checkpoint = open_checkpoint(tmp_path, "r1", [State], resume=False)
    assert not isinstance(checkpoint.saver, FencedSaver)
    close_checkpoint(checkpoint)


@pytest.mark.parametrize("content", [b"", b"{", b"[]", b'{"token": 7}', b"x" * 10_000])
def test_an_unreadable_claim_file_names_no_claim(tmp_path: Path, content: bytes):
    (tmp_path / CLAIM_FILE).write_bytes(content)
    assert current_token(tmp_path) is None


def test_every_claim_gets_a_new_token(tmp_path: Path):
    assert write_claim(tmp_path, 1) != write_claim(tmp_path, 1)
    assert current_token(tmp_path) is not None
