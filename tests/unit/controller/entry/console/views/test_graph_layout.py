"""The agents' graphs laid out by Graphviz's ``dot`` (issue 43): every edge drawn, and readable.

grandalf's straight segments crossed each other and ran along boxes; ``dot`` routes splines
around the boxes. For each of the four agents, what is drawn is measured as a reader would see
it: each route (its Bezier pieces sampled, then the straight piece to the arrow's tip) must not
enter a box it does not connect, edges cross each other no more than grandalf's did (and at most
once), and every edge of ``get_graph()`` is drawn exactly once. Without ``dot`` the console falls
back to grandalf (tested with ``dot`` hidden), saying so once in the log.
"""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from agents.registry import AGENTS
from controller.entry.console.views import graph_svg
from controller.entry.console.views.graph_svg import Box, Route, dot_layout, drawing, edges_of, grandalf_layout
from tests.host import missing

Point = tuple[float, float]


@pytest.fixture(autouse=True)
def _fresh_drawings():
    drawing.cache_clear()
    yield
    drawing.cache_clear()


def _needs_dot() -> None:
    if shutil.which("dot") is None:
        missing("dot, not installed on this host (Debian: apt-get install graphviz)")


def _line(a: Point, b: Point) -> list[Point]:
    steps = max(2, int(max(abs(b[0] - a[0]), abs(b[1] - a[1]))))
    return [(a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps) for k in range(steps + 1)]


def _bezier(p0: Point, p1: Point, p2: Point, p3: Point, steps: int = 40) -> list[Point]:
    out = []
    for k in range(steps + 1):
        t = k / steps
        u = 1 - t
        out.append(tuple(u ** 3 * p0[i] + 3 * u * u * t * p1[i] + 3 * u * t * t * p2[i] + t ** 3 * p3[i]
                         for i in (0, 1)))  # type: ignore[arg-type]
    return out


def drawn(route: Route) -> list[Point]:
    """The route as the SVG draws it, sampled about every pixel."""
    points = list(route.points)
    if not route.curved:
        return [p for a, b in zip(points, points[1:], strict=False) for p in _line(a, b)]
    spline, tip = points[:-1], points[-1]
    samples = [p for k in range(0, len(spline) - 3, 3) for p in _bezier(*spline[k:k + 4])]
    return samples + _line(spline[-1], tip)


def through_boxes(boxes: list[Box], routes: list[Route], inset: float = 2.0) -> list[tuple[str, str, str]]:
    """(source, target, box) for each route that enters a box it does not connect."""
    return [(r.source, r.target, b.name) for r in routes for b in boxes if b.name not in (r.source, r.target)
            and any(abs(x - b.x) < b.w / 2 - inset and abs(y - b.y) < b.h / 2 - inset for x, y in drawn(r))]


def _crosses(a: Point, b: Point, c: Point, d: Point) -> bool:
    def side(p: Point, q: Point, r: Point) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def edge_crossings(boxes: list[Box], routes: list[Route], pad: float = 4.0) -> int:
    """Pairs of routes that cross away from the boxes (where edges meet at a node, they may touch)."""
    def at_box(p: Point) -> bool:
        return any(abs(p[0] - b.x) <= b.w / 2 + pad and abs(p[1] - b.y) <= b.h / 2 + pad for b in boxes)
    pieces = [list(zip(drawn(r)[::3], drawn(r)[3::3], strict=False)) for r in routes]
    return sum(any(_crosses(a, b, c, d) and not at_box(a) for a, b in pieces[i] for c, d in pieces[j])
               for i in range(len(routes)) for j in range(i + 1, len(routes)))


class TestDotLayout:
    @pytest.mark.parametrize("agent", sorted(AGENTS))
    def test_every_edge_is_drawn_once_and_none_crosses_a_box_it_does_not_connect(self, agent: str):
        _needs_dot()
        shape = drawing(agent)
        names, edges = edges_of(agent)
        assert all(r.curved for r in shape.routes), "not dot's layout"
        assert Counter((r.source, r.target) for r in shape.routes) == Counter((s, t) for s, t, _ in edges)
        assert {b.name for b in shape.boxes} == set(names)
        assert through_boxes(list(shape.boxes), list(shape.routes)) == []

    @pytest.mark.parametrize("agent", sorted(AGENTS))
    def test_each_route_runs_from_its_source_s_box_to_its_target_s(self, agent: str):
        """A route is drawn for the edge it names: it leaves the source's box and its arrow meets the target's."""
        _needs_dot()
        shape = drawing(agent)
        at = {b.name: b for b in shape.boxes}

        def touches(p: Point, b: Box, pad: float = 3.0) -> bool:
            return abs(p[0] - b.x) <= b.w / 2 + pad and abs(p[1] - b.y) <= b.h / 2 + pad
        for r in shape.routes:
            assert touches(r.points[0], at[r.source]) and touches(r.points[-1], at[r.target]), (r.source, r.target)

    def test_edges_cross_each_other_no_more_than_grandalf_s(self):
        """Over the four graphs, dot's edges cross no more often than grandalf's, and at most once a graph."""
        _needs_dot()
        by_dot = {a: edge_crossings(*dot_layout(*edges_of(a))) for a in sorted(AGENTS)}
        by_grandalf = {a: edge_crossings(*grandalf_layout(*edges_of(a))) for a in sorted(AGENTS)}
        assert sum(by_dot.values()) <= sum(by_grandalf.values()) and max(by_dot.values()) <= 1, (by_dot, by_grandalf)

    def test_the_svg_draws_curves_with_the_names_escaped_and_linked(self):
        _needs_dot()
        svg = str(graph_svg.graph_svg("intake", {"ask": "running"}, "/runs/r?node={node}"))
        assert svg.count('<path class="edge') == len(edges_of("intake")[1]) and "<polyline" not in svg
        assert 'class="node running" data-node="ask"' in svg and 'href="/runs/r?node=ask"' in svg


class TestFallback:
    def test_without_dot_grandalf_draws_and_it_is_said_once(self, monkeypatch: pytest.MonkeyPatch):
        said: list[str] = []
        monkeypatch.setattr(graph_svg.shutil, "which", lambda name: None)
        monkeypatch.setattr(graph_svg.log, "warning", lambda event, **kw: said.append(event))
        graph_svg._say_no_dot.cache_clear()
        try:
            first, second = drawing("bank_parser"), drawing("idris")
        finally:
            graph_svg._say_no_dot.cache_clear()
        assert not any(r.curved for r in first.routes + second.routes)
        assert said == ["console.graph.no_dot"]
        names, edges = edges_of("bank_parser")
        assert Counter((r.source, r.target) for r in first.routes) == Counter((s, t) for s, t, _ in edges)
