"""Two runs or attempts side by side: code diff, outcome and checks, with an "only differences" view.

A side is ``RUN`` (its last attempt) or ``RUN:N`` (attempt N); each must be the viewer's to see.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.entry.console.views.attempt_page import check_lines
from controller.entry.console.views.attempts import Attempt, attempt, attempt_numbers, read_text
from controller.entry.console.views.frame_table import FrameTable, frame_table
from controller.entry.console.views.frames import produced_frame
from controller.entry.console.views.nodes import node_states
from controller.entry.console.views.side_by_side import SideBySide, side_by_side
from controller.entry.console.views.summary import summary_facts
from controller.platform.store import RunRow


@dataclass(frozen=True)
class Side:
    """One side: the run, its folder and the attempt compared (None: the run made none)."""

    row: RunRow
    run_dir: Path
    attempt: Attempt | None

    @property
    def label(self) -> str:
        """``RUN:N`` as the query string takes it."""
        return f"{self.row.id}:{self.attempt.number}" if self.attempt else self.row.id


@dataclass(frozen=True)
class Comparison:
    """Facts side by side (label, left, right, same?), the code diff, the checks diff and the
    frames the two produced, as columns (None unless both produced one)."""

    a: Side
    b: Side
    facts: list[tuple[str, str, str, bool]]
    code: SideBySide | None
    checks: SideBySide | None
    frames: FrameTable | None = None


def parse_side(text: str) -> tuple[str, int | None]:
    """``RUN`` or ``RUN:N`` → (run id, attempt or None).

    Raises:
        ValueError: N is not a positive number.
    """
    run_id, _, number = text.strip().partition(":")
    if number and not (number.isascii() and number.isdigit() and 0 < int(number) <= 100_000):
        raise ValueError(f"{number[:20]!r} is not an attempt number")
    return run_id, int(number) if number else None


def side(row: RunRow, run_dir: Path, number: int | None) -> Side:
    """The side of ``row``: attempt ``number``, or its last one."""
    numbers = attempt_numbers(run_dir)
    chosen = number if number is not None else (numbers[-1] if numbers else None)
    found = attempt(run_dir, chosen, node_states(run_dir).ends) if chosen is not None else None
    return Side(row, run_dir, found)


def _facts(a: Side, b: Side) -> list[tuple[str, str, str, bool]]:
    def of(s: Side) -> dict[str, str]:
        base = {"run": s.row.id, "agent": s.row.agent, "target": s.row.target, "status": s.row.status,
                "attempt": str(s.attempt.number) if s.attempt else "—",
                "attempt outcome": s.attempt.outcome if s.attempt else "—",
                "nodes": " · ".join(f"{e.node} {e.outcome}" for e in s.attempt.ends) if s.attempt else "—"}
        return {**base, **dict(summary_facts(s.row.summary, s.row.agent, s.row.id))}

    left, right = of(a), of(b)
    keys = list(dict.fromkeys([*left, *right]))
    return [(k, left.get(k, "—"), right.get(k, "—"), left.get(k) == right.get(k)) for k in keys]


def _file_lines(s: Side, name: str) -> list[str]:
    if s.attempt is None or not name:
        return []
    return read_text(s.run_dir / "attempts" / str(s.attempt.number) / name).splitlines()


def _frames(a: Side, b: Side) -> FrameTable | None:
    if a.attempt is None or b.attempt is None:
        return None
    left, right = (produced_frame(s.run_dir / "attempts" / str(n) / "result.json")
                   for s, n in ((a, a.attempt.number), (b, b.attempt.number)))
    return frame_table(left, right, anchor="f") if left.rows and right.rows else None


def compare(a: Side, b: Side) -> Comparison:
    """The comparison of ``a`` (left) and ``b`` (right)."""
    code_a, code_b = (a.attempt.code if a.attempt else ""), (b.attempt.code if b.attempt else "")
    code = side_by_side(_file_lines(a, code_a), _file_lines(b, code_b)) if code_a or code_b else None
    checks_a = [text for _, text in check_lines("\n".join(_file_lines(a, "verify.txt")))]
    checks_b = [text for _, text in check_lines("\n".join(_file_lines(b, "verify.txt")))]
    checks = side_by_side(checks_a, checks_b) if checks_a or checks_b else None
    return Comparison(a, b, _facts(a, b), code, checks, _frames(a, b))
