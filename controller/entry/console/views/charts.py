"""Charts as inline SVG drawn on the server: a line chart of ratios over time and a bar chart.

Presentation attributes and classes only (the CSP forbids inline style); every chart has an
accessible name, and the page prints the same numbers as a table beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

from controller.entry.console.filters import exact

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 28


@dataclass(frozen=True)
class Series:
    """One line: its name and its (x, y) points, x in epoch seconds, y in 0–1."""

    name: str
    points: tuple[tuple[float, float], ...]


def _frame(label: str, body: str, axis: str) -> Markup:
    return Markup(f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
                  f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">{axis}{body}</svg>')


def _y_axis_ratio() -> str:
    parts = []
    for share in (0, 0.5, 1):
        y = TOP + (1 - share) * (HEIGHT - TOP - BOTTOM)
        parts.append(f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{share * 100:.0f}%</text>')
    return "".join(parts)


def line_chart(label: str, series: list[Series]) -> Markup:
    """Ratios over time, one polyline (with dots) per series; the x axis spans the points' times."""
    xs = [x for s in series for x, _ in s.points]
    if not xs:
        return Markup("")
    low, high = min(xs), max(xs)
    span = (high - low) or 1.0

    def at(x: float, y: float) -> tuple[float, float]:
        return (LEFT + (x - low) / span * (WIDTH - LEFT - RIGHT), TOP + (1 - y) * (HEIGHT - TOP - BOTTOM))

    body = []
    for index, one in enumerate(series):
        points = [at(x, y) for x, y in one.points]
        body.append(f'<polyline class="series-{index % 4}" '
                    f'points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}"/>')
        body += [f'<circle class="series-{index % 4}" cx="{x:.1f}" cy="{y:.1f}" r="3"/>' for x, y in points]
    ticks = (f'<text x="{LEFT}" y="{HEIGHT - 8}">{escape(exact(low)[:10])}</text>'
             f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">{escape(exact(high)[:10])}</text>')
    return _frame(label, "".join(body) + ticks, _y_axis_ratio())


def bar_chart(label: str, bars: list[tuple[str, int]]) -> Markup:
    """Counts as vertical bars, labelled under each bar and with its count on top."""
    if not bars:
        return Markup("")
    top = max(count for _, count in bars) or 1
    slot = min(80.0, (WIDTH - LEFT - RIGHT) / len(bars))
    body = []
    for index, (name, count) in enumerate(bars):
        height = count / top * (HEIGHT - TOP - BOTTOM - 12)
        x, y = LEFT + index * slot + slot * 0.15, HEIGHT - BOTTOM - height
        body.append(f'<rect class="bar series-0" x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" '
                    f'height="{height:.1f}"/>'
                    f'<text x="{x + slot * 0.35:.1f}" y="{y - 3:.1f}" text-anchor="middle">{count}</text>'
                    f'<text x="{x + slot * 0.35:.1f}" y="{HEIGHT - 10}" text-anchor="middle">'
                    f'{escape(name[:18])}</text>')
    axis = f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}"/>'
    return _frame(label, "".join(body), axis)
