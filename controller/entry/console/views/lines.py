"""A window of a big text file by line numbers: never the whole file in a page.

The run's progress lines (``console.txt``) and an attempt's stdout/stderr can be long (a parser
that prints a million lines). A page shows :data:`WINDOW` lines from ``start`` (1-based), or the
last ones; the file is read in 1 MiB chunks, counting newlines in C, and only the window's
lines are decoded. Only complete lines count, as the event stream sends them; each is cut at
:data:`~controller.entry.service.events.MAX_LINE` bytes like the stream's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from controller.runner.dispatch import MAX_LINE

WINDOW = 1000
CHUNK = 1024 * 1024
#: The node a progress line speaks of: ``  [attempt 2] execute   ok …`` → execute.
NODE_OF = re.compile(r"^\s*\[(?:setup|attempt \d+|turn \d+)\]\s+([A-Za-z_][\w-]*)")


@dataclass(frozen=True)
class Line:
    """One line: its number (1-based), its text, and the node it speaks of ("" for none)."""

    number: int
    text: str
    node: str


@dataclass(frozen=True)
class Window:
    """Lines ``first``… of a file of ``total`` complete lines."""

    lines: tuple[Line, ...]
    first: int
    total: int
    size: int

    @property
    def previous(self) -> int | None:
        """The start of the window before this one, if any."""
        return max(1, self.first - self.size) if self.first > 1 else None

    @property
    def next(self) -> int | None:
        """The start of the window after this one, if any."""
        after = self.first + len(self.lines)
        return after if after <= self.total else None

    @property
    def is_tail(self) -> bool:
        """Whether the window reaches the file's last complete line (the live tail follows it)."""
        return self.first + len(self.lines) > self.total


def count_lines(path: Path) -> int:
    """Complete lines in ``path`` (0 if it cannot be read)."""
    total = 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                total += chunk.count(b"\n")
    except OSError:
        return 0
    return total


def _decode(raw: bytes, number: int) -> Line:
    text = raw[:MAX_LINE].decode("utf-8", "replace")
    match = NODE_OF.match(text)
    return Line(number, text, match.group(1) if match else "")


def _read(path: Path, first: int, size: int) -> list[Line]:
    """Lines ``first`` to ``first + size - 1``: chunks are skipped by their newline count."""
    lines: list[Line] = []
    seen, partial = 0, b""
    with path.open("rb") as handle:
        while len(lines) < size and (chunk := handle.read(CHUNK)):
            newlines = chunk.count(b"\n")
            if seen + newlines < first - 1:  # the window starts in a later chunk
                seen += newlines
                partial = chunk[chunk.rfind(b"\n") + 1:] if newlines else (partial + chunk)[-MAX_LINE:]
                continue
            *complete, partial = (partial + chunk).split(b"\n")
            for raw in complete:
                seen += 1
                if first <= seen < first + size:
                    lines.append(_decode(raw, seen))
            partial = partial[-(MAX_LINE + 1):] if len(partial) > MAX_LINE else partial
    return lines


def window(path: Path, start: int | None, size: int = WINDOW) -> Window:
    """Lines from ``start`` (1-based), or the last ``size`` lines when ``start`` is None."""
    total = count_lines(path)
    first = max(1, total - size + 1) if start is None else max(1, min(start, max(total, 1)))
    try:
        lines = _read(path, first, size) if total else []
    except OSError:
        lines = []
    return Window(tuple(lines), first, total, size)
