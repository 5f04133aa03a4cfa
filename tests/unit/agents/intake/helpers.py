"""Shared builders for the intake agent's unit tests: the example targets' schemas and a
resolver input. Plain helpers, no doubles."""

from __future__ import annotations

from pathlib import Path

from agents.intake.agent import load_target
from agents.intake.models import Question, Scalar
from agents.intake.resolver import ResolverInput
from agents.intake.schema import NodeSchema
from agents.intake.target import IntakeTarget
from agents.ports.config import AgentConfig
from controller.platform.settings import PROJECT_ROOT

DATA = PROJECT_ROOT / "data"
EXAMPLES = ("intake-cross-node", "intake-contradiction", "intake-future", "intake-priority-shift")


def example(name: str = "intake-priority-shift", data_dir: Path = DATA) -> IntakeTarget:
    """An example target of data/, validated as `run` validates it."""
    return load_target(AgentConfig(data_dir=data_dir), name)


def schemas() -> dict[str, NodeSchema]:
    """Personal, Income, Goals, Expenses, Savings (the priority-shift example's nodes)."""
    return example().schemas


def ask(node: str, field: str, kind: str = "field", **extra: object) -> Question:
    return Question(node, field, f"{node}.{field}?", kind, **extra)  # type: ignore[arg-type]


def inp(reply: str, question: Question | None = None,
        values: dict[str, dict[str, Scalar | None]] | None = None) -> ResolverInput:
    return ResolverInput(reply, question or ask("Personal", "age"), schemas(), values or {})
