"""The agents' graphs and the charts as SVG: drawn from the real graphs, names escaped, no inline style."""

from __future__ import annotations

import re

import pytest

from agents.registry import AGENTS
from controller.entry.console.views.charts import Series, bar_chart, line_chart
from controller.entry.console.views.graph_svg import drawing, graph_svg


class TestGraph:
    @pytest.mark.parametrize("agent", sorted(AGENTS))
    def test_every_node_of_the_agents_graph_is_drawn_and_linked(self, agent: str):
        """The nodes are the ones `controller graph` prints; each (but start and end) links to its lines."""
        svg = str(graph_svg(agent, {}, "/runs/r?node={node}#lines"))
        nodes = [n for n in AGENTS[agent].graph(1).get_graph().nodes]
        for node in nodes:
            assert f'data-node="{node}"' in svg
        assert svg.count("?node=") == len(nodes) - 2
        assert "style=" not in svg

    def test_the_states_are_classes(self):
        svg = str(graph_svg("bank_parser", {"execute": "running", "analyze": "done", "compare": "failed"}, "#{node}"))
        assert re.search(r'class="node running" data-node="execute"', svg)
        assert 'class="node done" data-node="analyze"' in svg and 'class="node failed" data-node="compare"' in svg

    def test_boxes_do_not_overlap(self):
        boxes = drawing("bank_parser").boxes
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                apart_x = abs(a.x - b.x) >= (a.w + b.w) / 2
                apart_y = abs(a.y - b.y) >= (a.h + b.h) / 2
                assert apart_x or apart_y, (a.name, b.name)


class TestCharts:
    def test_a_line_chart_has_a_name_and_a_point_per_value(self):
        svg = str(line_chart("rate <x>", [Series("bank_parser", ((0.0, 0.5), (86400.0, 1.0)))]))
        assert 'aria-label="rate &lt;x&gt;"' in svg and svg.count("<circle") == 2 and "style=" not in svg

    def test_a_bar_chart_escapes_its_labels(self):
        svg = str(bar_chart("kinds", [("<b>mismatch</b>", 3), ("timeout", 1)]))
        assert "&lt;b&gt;" in svg and svg.count('class="bar') == 2

    def test_nothing_to_draw_is_nothing(self):
        assert str(line_chart("x", [])) == "" and str(bar_chart("x", [])) == ""
