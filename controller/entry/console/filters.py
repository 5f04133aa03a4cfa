"""Jinja2 filters: times (relative, with the exact time on hover), durations and sizes."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

_UNITS = ((86400, "d"), (3600, "h"), (60, "min"), (1, "s"))


def iso(moment: float | None) -> str:
    """``moment`` (epoch seconds) as ISO 8601 in UTC, for ``<time datetime>``."""
    if moment is None:
        return ""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def exact(moment: float | None) -> str:
    """``moment`` as the exact time people read (UTC), for the hover text."""
    if moment is None:
        return ""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(moment: float | None, now: float | None = None) -> str:
    """How long ago ``moment`` was, in its largest unit ("3 min ago", "just now")."""
    if moment is None:
        return "—"
    seconds = (time.time() if now is None else now) - moment
    if seconds < 5:
        return "just now"
    for size, unit in _UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def duration(seconds: float | None) -> str:
    """A duration as people read it: 0.4 s, 12 s, 3 min 5 s, 2 h 10 min."""
    if seconds is None or seconds < 0:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    return f"{minutes // 60} h {minutes % 60} min"


def size(count: int | None) -> str:
    """A byte count: 512 B, 4.0 KiB, 1.2 MiB."""
    if count is None:
        return "—"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def percent(ratio: float | None) -> str:
    """A ratio 0–1 as a percentage, or a dash before any verdict."""
    return "—" if ratio is None else f"{ratio * 100:.0f} %"


def segment(value: str) -> str:
    """``value`` quoted as one path segment (a ``/`` in it is quoted too)."""
    return quote(value, safe="")


def path_url(value: str) -> str:
    """A relative path (``attempts/1/parser.py``) quoted part by part for a URL."""
    return quote(value, safe="/")


FILTERS: dict[str, Callable[..., Any]] = {
    "iso": iso, "exact": exact, "ago": ago, "duration": duration, "size": size, "percent": percent,
    "seg": segment,
    "pathq": path_url,
}
