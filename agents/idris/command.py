"""Moved: an Idris target now runs through the controller's one agent runner
(:mod:`controller.agent_runner`) and :class:`agents.idris.agent.IdrisAgent`, which holds
the helpers that were here. Kept importable for one release."""

from __future__ import annotations

import argparse

from agents.idris.agent import (  # noqa: F401 - re-exports
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MEMORY_MB,
    idris_limits,
    idris_max_attempts,
    make_idris_coder,
)
from controller.settings import Settings
from controller.target_config import TargetConfig


def run_idris(args: argparse.Namespace, settings: Settings, config: TargetConfig) -> int:
    """Run the Idris agent on ``args.target``; exit 0 type-checks, 1 gave up."""
    from agents.registry import get_agent
    from controller.agent_runner import run_agent

    return run_agent(get_agent(config.agent), args.target, settings, getattr(args, "max_attempts", None))
