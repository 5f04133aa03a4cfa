"""The layers of docs/architecture.md, read from the imports themselves (grimp, as import-linter).

``make lint`` enforces the same with import-linter's contracts in pyproject.toml; these tests
also show that the check fails when an upward import is added, and that there are no cycles.
"""

from __future__ import annotations

from collections.abc import Iterable

import grimp
import pytest

from agents.registry import AGENTS


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("agents", "controller")


def upward(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Direct imports from agents/ into controller/."""
    return sorted((i["importer"], i["imported"])
                  for i in graph.find_matching_direct_imports(import_expression="agents.** -> controller.**"))


def test_agents_import_nothing_of_the_controller(graph):
    assert upward(graph) == []


def test_the_check_fails_on_an_upward_import(graph):
    """The same check on a copy of the graph with one `from controller ...` added to an agent."""
    broken = grimp.build_graph("agents", "controller")
    broken.add_import(importer="agents.bank_parser.nodes", imported="controller.platform.settings")
    assert upward(broken) == [("agents.bank_parser.nodes", "controller.platform.settings")]


@pytest.mark.parametrize("package", sorted(AGENTS))
def test_no_controller_module_imports_an_agent_package(graph, package):
    """The controller finds agents through agents.registry; it never names an agent's package."""
    hits = graph.find_matching_direct_imports(import_expression=f"controller.** -> agents.{package}.**")
    assert hits == []


def test_controller_layers_point_down(graph):
    """The platform never imports the runner or the entry points; the runner never the entry points."""
    for lower, upper in (("controller.platform", "controller.runner"), ("controller.platform", "controller.entry"),
                         ("controller.runner", "controller.entry")):
        assert graph.find_matching_direct_imports(import_expression=f"{lower}.** -> {upper}.**") == []


def cyclic(graph: grimp.ImportGraph, modules: Iterable[str]) -> list[str]:
    """The modules among ``modules`` that reach themselves through their own imports."""
    return [m for m in sorted(modules)
            if any(graph.find_shortest_chain(importer=imported, imported=m)
                   for imported in graph.find_modules_directly_imported_by(m))]


def test_no_import_cycles(graph):
    """No module reaches itself through its own imports (function-local imports included)."""
    assert cyclic(graph, graph.modules) == []


def test_the_cycle_check_fails_on_a_cycle():
    """The same check finds a cycle added to a copy of the graph."""
    broken = grimp.build_graph("agents", "controller")
    broken.add_import(importer="agents.ports.errors", imported="agents.registry")
    assert cyclic(broken, ("agents.ports.errors", "agents.registry")) == ["agents.ports.errors", "agents.registry"]


def inner_dispatch_imports(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Direct imports of the dispatch package's inner modules from outside it."""
    return sorted((i["importer"], i["imported"])
                  for i in graph.find_matching_direct_imports(
                      import_expression="controller.** -> controller.runner.dispatch.*")
                  if not i["importer"].startswith("controller.runner.dispatch"))


def test_the_service_reaches_its_engine_only_through_the_dispatch_package(graph):
    """HTTP (controller.entry) imports controller.runner.dispatch, never one of its inner modules."""
    assert inner_dispatch_imports(graph) == []
    assert graph.find_matching_direct_imports(import_expression="controller.entry.** -> controller.runner.dispatch")


def test_the_dispatch_check_fails_on_an_inner_import():
    """The same check finds a route that imports the workers module directly."""
    broken = grimp.build_graph("agents", "controller")
    broken.add_import(importer="controller.entry.service.routes", imported="controller.runner.dispatch.workers")
    assert inner_dispatch_imports(broken) == [("controller.entry.service.routes", "controller.runner.dispatch.workers")]
