"""The agents, by the name ``target.toml``'s ``agent`` uses (``bank_parser`` without one).

The controller finds an agent here and never names one's package itself. A new agent is a
package implementing :class:`agents.base.Agent` and one line in :data:`AGENTS`.
"""

from __future__ import annotations

from pathlib import Path

from agents.bank_parser.agent import BankParserAgent
from agents.base import Agent
from agents.blueprint.agent import BlueprintAgent
from agents.idris.agent import IdrisAgent
from agents.intake.agent import IntakeAgent
from agents.ports.errors import TargetError
from agents.targets import load_target_config

AGENTS: dict[str, Agent] = {agent.name: agent for agent in (BankParserAgent(), IdrisAgent(), IntakeAgent(),
                                                                    BlueprintAgent())}
#: The agent of a target folder without target.toml.
DEFAULT_AGENT = "bank_parser"


def get_agent(name: str) -> Agent:
    """The agent called ``name``.

    Raises:
        TargetError: no agent has that name.
    """
    try:
        return AGENTS[name]
    except KeyError:
        raise TargetError(f"no agent called {name!r}", hint=f"agents: {', '.join(AGENTS)}") from None


def agent_for_target(data_dir: Path, target: str) -> Agent:
    """The agent a target's ``target.toml`` names, else the default one.

    Raises:
        TargetError: a bad target name. ConfigError: a target.toml that does not validate.
    """
    config = load_target_config(data_dir, target)
    return get_agent(config.agent if config is not None else DEFAULT_AGENT)
