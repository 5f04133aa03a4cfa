"""An agent's LangGraph graph as SVG, drawn on the server.

The graph is the one ``python -m controller graph --agent NAME`` prints (the agent's compiled
graph, ``get_graph()``). Positions and edge curves come from Graphviz's ``dot`` (Debian's
``graphviz``), run once per agent and process on our own graph, bounded by :data:`DOT_TIMEOUT`:
its ranks, crossing reduction and splines routed around the boxes keep edges readable, where
grandalf's Sugiyama layout (what LangGraph's ASCII drawing uses) drew straight segments across
boxes. Without ``dot`` (or if it fails) the drawing falls back to grandalf, said once in the log.
The SVG (boxes, edges, arrowheads) is written here, with node names escaped. Each node is a link
to the run page filtered to its lines (``?node=``), so a click works without scripts; the script
turns it into an in-page filter and moves the
``running`` class as ``started`` and ``node`` events arrive.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache

import structlog
from grandalf.graphs import Edge, Graph, Vertex
from grandalf.layouts import SugiyamaLayout
from grandalf.routing import route_with_lines
from markupsafe import Markup, escape

from agents.registry import get_agent

NODE_H = 30
CHAR_W = 7.5
PAD = 16
MARGIN = 24
START, END = "__start__", "__end__"
#: Seconds ``dot`` may take on one graph (a few nodes: milliseconds) before grandalf draws it.
DOT_TIMEOUT = 10.0
#: Points per inch: ``dot`` takes sizes in inches and gives positions in points (drawn as pixels).
POINTS = 72.0
log = structlog.get_logger("sandloop.console")


@dataclass(frozen=True)
class Box:
    """A node's centre and size."""

    name: str
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Route:
    """An edge's points, and whether it is conditional (drawn dashed). ``curved``: the points are a
    cubic Bezier spline (a start, then three points per piece) and the arrow's tip; else a polyline."""

    source: str
    target: str
    points: tuple[tuple[float, float], ...]
    conditional: bool
    curved: bool = False


@dataclass(frozen=True)
class Drawing:
    """A laid-out graph: boxes, routes and the extent of the drawing."""

    boxes: tuple[Box, ...]
    routes: tuple[Route, ...]
    width: float
    height: float


class _View:
    """What grandalf reads and writes on a vertex or an edge."""

    def __init__(self, w: float = 0, h: float = 0) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = points


def _width(name: str) -> float:
    return max(60.0, len(name) * CHAR_W + 2 * PAD)


def _lay_out(names: list[str], edges: list[tuple[str, str, bool]]) -> tuple[dict[str, Vertex], list[Edge]]:
    vertices = {name: Vertex(name) for name in names}
    for name, vertex in vertices.items():
        vertex.view = _View(_width(name), NODE_H)
    links = [Edge(vertices[s], vertices[t], data=c) for s, t, c in edges if s != t]
    graph = Graph(list(vertices.values()), links)
    for component in graph.C:
        for edge in component.sE:
            edge.view = _View()
        layout = SugiyamaLayout(component)
        layout.xspace, layout.yspace = 28, 34
        roots = [vertices[START]] if START in vertices and vertices[START] in component.sV else None
        layout.init_all(roots=roots)
        layout.draw()
        layout.route_edge = route_with_lines
        layout.draw_edges()
    return vertices, links


def _dot_source(names: list[str], edges: list[tuple[str, str, bool]]) -> str:
    """The graph in dot's language: nodes and edges by index (``nK``, ``eK``: no name is quoted, and the
    answer is read back by these ids, not by its own order), boxes of the drawn size."""
    index = {name: k for k, name in enumerate(names)}
    nodes = "".join(f'n{k} [width={_width(n) / POINTS:.3f}, height={NODE_H / POINTS:.3f}];\n' for n, k in index.items())
    links = "".join(f"n{index[s]} -> n{index[t]} [id=e{k}];\n" for k, (s, t, _) in enumerate(edges))
    return ("digraph g {\ngraph [rankdir=TB, nodesep=0.4, ranksep=0.45, splines=true];\n"
            'node [shape=box, fixedsize=true, label=""];\n' + nodes + links + "}\n")


def _points(text: str, height: float) -> list[tuple[float, float]]:
    """``x,y x,y …`` in dot's points (y up) as SVG coordinates (y down)."""
    return [(float(x), height - float(y)) for x, y in (p.split(",")[:2] for p in text.split())]


def _spline(pos: str, height: float) -> tuple[tuple[float, float], ...]:
    """An edge's ``pos`` (``e,TIP`` and ``s,START`` then the spline's points) as the spline to the arrow's tip."""
    tip: list[tuple[float, float]] = []
    parts = []
    for part in pos.split(";")[0].split():
        if part.startswith("e,"):
            tip = _points(part[2:], height)
        elif not part.startswith("s,"):
            parts.append(part)
    spline = _points(" ".join(parts), height)
    return tuple(spline + (tip or spline[-1:]))


def dot_layout(names: list[str], edges: list[tuple[str, str, bool]]) -> tuple[list[Box], list[Route]]:
    """Boxes and curved routes by Graphviz's ``dot`` (``-Tjson``).

    Raises:
        OSError: ``dot`` is missing or cannot run.
        subprocess.SubprocessError: it took longer than :data:`DOT_TIMEOUT` or failed.
        ValueError: its answer is not JSON.
        KeyError: its answer lacks a node or an edge asked for.
    """
    dot = shutil.which("dot")
    if dot is None:
        raise FileNotFoundError("dot")
    done = subprocess.run([dot, "-Tjson"], input=_dot_source(names, edges), capture_output=True, text=True,
                          timeout=DOT_TIMEOUT, check=True)
    layout = json.loads(done.stdout)
    height = float(layout["bb"].split(",")[3])
    found = {str(o.get("name")): o for o in layout["objects"]}
    boxes = [Box(name, *_points(found[f"n{k}"]["pos"], height)[0], _width(name), NODE_H)
             for k, name in enumerate(names)]
    drawn = {str(e.get("id")): e for e in layout.get("edges", [])}
    routes = [Route(s, t, _spline(drawn[f"e{k}"]["pos"], height), c, curved=True) for k, (s, t, c) in enumerate(edges)]
    return boxes, routes


def grandalf_layout(names: list[str], edges: list[tuple[str, str, bool]]) -> tuple[list[Box], list[Route]]:
    """Boxes and straight routes by grandalf's Sugiyama layout (the fallback without ``dot``)."""
    vertices, links = _lay_out(names, edges)
    boxes = [Box(n, v.view.xy[0], v.view.xy[1], v.view.w, v.view.h) for n, v in vertices.items()]
    routes = [Route(e.v[0].data, e.v[1].data, tuple(e.view.points), bool(e.data)) for e in links]
    routes += [_self_loop(next(b for b in boxes if b.name == s), c) for s, t, c in edges if s == t]
    return boxes, routes


@lru_cache(maxsize=1)
def _say_no_dot(why: str) -> None:
    """Log once per process that the graphs fall back to grandalf."""
    log.warning("console.graph.no_dot", reason=why, fallback="grandalf")


def edges_of(agent: str) -> tuple[list[str], list[tuple[str, str, bool]]]:
    """``agent``'s graph as ``get_graph()`` gives it: node names, and (source, target, conditional) edges."""
    shape = get_agent(agent).graph(1).get_graph()
    return list(shape.nodes), [(e.source, e.target, bool(e.conditional)) for e in shape.edges]


@lru_cache(maxsize=16)
def drawing(agent: str) -> Drawing:
    """The laid-out graph of ``agent`` (computed once per agent and process): by ``dot``, else by grandalf."""
    names, edges = edges_of(agent)
    try:
        boxes, routes = dot_layout(names, edges)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError) as exc:
        _say_no_dot(f"{type(exc).__name__}: {str(exc)[:200]}")
        boxes, routes = grandalf_layout(names, edges)
    return _shifted(boxes, routes)


def _self_loop(box: Box, conditional: bool) -> Route:
    right, top, bottom = box.x + box.w / 2, box.y - box.h / 4, box.y + box.h / 4
    points = ((right, top), (right + 22, top - 6), (right + 22, bottom + 6), (right, bottom))
    return Route(box.name, box.name, points, conditional)


def _shifted(boxes: list[Box], routes: list[Route]) -> Drawing:
    """Everything moved so that the drawing starts at (MARGIN, MARGIN)."""
    xs = [b.x - b.w / 2 for b in boxes] + [p[0] for r in routes for p in r.points]
    ys = [b.y - b.h / 2 for b in boxes] + [p[1] for r in routes for p in r.points]
    dx, dy = MARGIN - min(xs), MARGIN - min(ys)
    moved = tuple(Box(b.name, b.x + dx, b.y + dy, b.w, b.h) for b in boxes)
    paths = tuple(Route(r.source, r.target, tuple((x + dx, y + dy) for x, y in r.points), r.conditional, r.curved)
                  for r in routes)
    right = max([b.x + b.w / 2 for b in moved] + [p[0] for r in paths for p in r.points])
    bottom = max([b.y + b.h / 2 for b in moved] + [p[1] for r in paths for p in r.points])
    return Drawing(moved, paths, right + MARGIN, bottom + MARGIN)


def _edge(route: Route) -> str:
    kind = "edge conditional" if route.conditional else "edge"
    if route.curved:  # the spline, then a straight piece to the arrow's tip (the marker's direction)
        (x0, y0), rest, (tx, ty) = route.points[0], route.points[1:-1], route.points[-1]
        pieces = " ".join("C " + " ".join(f"{x:.1f},{y:.1f}" for x, y in rest[k:k + 3])
                          for k in range(0, len(rest) - 2, 3))
        return f'<path class="{kind}" d="M {x0:.1f},{y0:.1f} {pieces} L {tx:.1f},{ty:.1f}" marker-end="url(#arrow)"/>'
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in route.points)
    return f'<polyline class="{kind}" points="{points}" marker-end="url(#arrow)"/>'


def _node(box: Box, state: str, href: str) -> str:
    name = escape(box.name)
    label = escape(box.name.strip("_"))
    x, y = box.x - box.w / 2, box.y - box.h / 2
    rx = box.h / 2 if box.name in (START, END) else 6
    shape = (f'<rect x="{x:.1f}" y="{y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="{rx:.0f}"/>'
             f'<text x="{box.x:.1f}" y="{box.y + 4:.1f}" text-anchor="middle">{label}</text>')
    group = f'<g class="node {state}" data-node="{name}">{shape}</g>'
    if box.name in (START, END):
        return group
    return (f'<a href="{escape(href)}" data-node="{name}" aria-label="{label}: show its lines">'
            f'<title>{label}{": " + state if state else ""}</title>{group}</a>')


def graph_svg(agent: str, states: dict[str, str], href: str) -> Markup:
    """The SVG of ``agent``'s graph; ``states`` maps a node to its class (``done``, ``failed``,
    ``running``, ``selected``), ``href`` is the link of a node with ``{node}`` in it."""
    shape = drawing(agent)
    edges = "".join(_edge(r) for r in shape.routes)
    nodes = "".join(_node(b, states.get(b.name, ""), href.replace("{node}", b.name)) for b in shape.boxes)
    arrow = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path class="arrow" d="M0,0 L10,5 L0,10 z"/></marker></defs>')
    return Markup(f'<svg class="graph" role="group" aria-label="the {escape(agent)} agent\'s graph" '
                  f'viewBox="0 0 {shape.width:.0f} {shape.height:.0f}" width="{shape.width:.0f}" '
                  f'height="{shape.height:.0f}" xmlns="http://www.w3.org/2000/svg">{arrow}{edges}{nodes}</svg>')
