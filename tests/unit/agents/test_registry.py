"""The one agent interface and the registry: every agent implements it, targets map to
their agent by target.toml, and each agent's graph is drawn as the committed Mermaid."""

from __future__ import annotations

import shutil

import pytest

from agents.base import Agent
from agents.ports.errors import TargetError
from agents.registry import AGENTS, DEFAULT_AGENT, agent_for_target, get_agent
from controller.entry.cli import main
from controller.entry.commands import agent_graph_mermaid
from controller.platform.settings import PROJECT_ROOT
from tests.conftest import ICICI

CONTRACT_TARGET = PROJECT_ROOT / "data" / "service-contract"
DIAGRAMS = PROJECT_ROOT / "docs" / "agents"


class TestInterface:
    @pytest.mark.parametrize("name", sorted(AGENTS))
    def test_every_agent_implements_the_interface(self, name):
        """Each registered agent is an Agent with its own name, kinds, artefact and images (none
        only for an agent that executes nothing, whose plans name no image)."""
        agent = AGENTS[name]
        assert isinstance(agent, Agent)
        assert agent.name == name
        assert agent.info.target_kinds and agent.info.artefact
        assert agent.info.images or name == "intake"

    @pytest.mark.parametrize("name", sorted(AGENTS))
    def test_known_nodes_are_the_graphs_nodes(self, name):
        """Metrics' node labels come from the compiled graph itself."""
        agent = AGENTS[name]
        assert set(agent.info.nodes) == {n for n in agent.graph(2).nodes if not n.startswith("__")}
        assert agent.info.nodes

    def test_each_agent_names_its_image(self):
        """Each agent runs in its own sandbox image (a folder of sandbox_images/); the Idris agent
        also reads its reference PDFs in the python-parser image (issue 23)."""
        assert AGENTS["bank_parser"].info.images == ("python-parser",)
        assert AGENTS["idris"].info.images == ("idris2", "python-parser")


class TestRegistry:
    def test_unknown_agent_is_a_clear_error(self):
        """Asking for an agent that does not exist names the ones that do."""
        with pytest.raises(TargetError, match="no agent called 'nope'") as info:
            get_agent("nope")
        assert "bank_parser" in info.value.one_line() and "idris" in info.value.one_line()

    def test_target_without_target_toml_is_the_default_agent(self, tmp_path):
        """A plain statement folder belongs to the default agent."""
        shutil.copytree(ICICI, tmp_path / "icici")
        assert agent_for_target(tmp_path, "icici").name == DEFAULT_AGENT

    def test_target_toml_names_the_agent(self, tmp_path):
        """target.toml's agent = "idris" selects the Idris agent."""
        shutil.copytree(CONTRACT_TARGET, tmp_path / "service-contract")
        assert agent_for_target(tmp_path, "service-contract").name == "idris"

    def test_target_toml_names_the_blueprint_agent(self, tmp_path):
        """target.toml's agent = "blueprint" selects the blueprint agent."""
        shutil.copytree(PROJECT_ROOT / "data" / "acme-research", tmp_path / "acme-research")
        assert agent_for_target(tmp_path, "acme-research").name == "blueprint"


class TestGraphDiagrams:
    @pytest.mark.parametrize("name", sorted(AGENTS))
    def test_committed_diagram_is_up_to_date(self, name):
        """docs/agents/<agent>.mmd is exactly what `controller graph --agent` prints today."""
        committed = (DIAGRAMS / f"{name}.mmd").read_text(encoding="utf-8")
        assert agent_graph_mermaid(name) == committed, f"regenerate: python -m controller graph --agent {name}"

    @pytest.mark.parametrize("name", sorted(AGENTS))
    def test_docs_embed_the_diagram(self, name):
        """The documentation site's graphs page includes each agent's committed diagram in a Mermaid fence."""
        page = (PROJECT_ROOT / "docs" / "agents" / "graphs.md").read_text(encoding="utf-8")
        assert f'```mermaid\n--8<-- "docs/agents/{name}.mmd"\n```' in page, \
            f"docs/agents/graphs.md lacks the {name} diagram"

    def test_graph_command_prints_every_node_and_edge(self, capsys):
        """`graph --agent idris` prints Mermaid with every node and the decision's three edges."""
        assert main(["graph", "--agent", "idris"]) == 0
        out = capsys.readouterr().out
        assert out.lstrip("-\n").startswith("config:") and "graph TD;" in out
        for node in ("analyze", "generate", "save", "typecheck", "fix", "finish", "fail"):
            assert f"\t{node}({node})" in out
        for edge in ("typecheck -.-> finish;", "typecheck -.-> fix;", "typecheck -.-> fail;"):
            assert edge in out
