"""The judgement of a finished conversation: against expected.json, else by completeness.

With expected.json every node and field it names must hold exactly that value (numbers
compared as numbers, null for a skipped or missing field). Without it, the run passes when
every required field is filled or explicitly skipped and no conflict is left unresolved.
Either way, a conflict still open fails the run: the graph does not know which value is right.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.intake.models import Scalar
from agents.intake.schema import NodeSchema
from agents.intake.target import Expected


@dataclass(frozen=True)
class Verdict:
    """passed or failed, how it was judged, and what was wrong."""

    passed: bool
    judged: str
    problems: tuple[str, ...] = ()
    not_understood: tuple[str, ...] = ()
    """Fields the person could not answer in three tries: the run is ``incomplete``, not ``failed``."""

    @property
    def status(self) -> str:
        """The run's status (``incomplete``: nothing else wrong, but fields were not understood)."""
        if self.passed and self.not_understood:
            return "incomplete"
        return "passed" if self.passed else "failed"


def judge(values: dict[str, dict[str, Scalar | None]], skipped: set[tuple[str, str]],
          open_conflicts: list[str], schemas: dict[str, NodeSchema], expected: Expected | None,
          not_understood: tuple[str, ...] = ()) -> Verdict:
    """The run's verdict (see the module doc); fields not understood make an otherwise good run
    ``incomplete`` (a comparison's mismatch still fails it)."""
    problems = [f"unresolved conflict on {where}" for where in open_conflicts]
    if expected is not None:
        problems += _mismatches(values, expected)
        return Verdict(not problems, "compared with expected.json", tuple(problems), not_understood)
    problems += [f"{node}.{field} neither answered nor skipped" for node, schema in schemas.items()
                 for field in schema.required
                 if values.get(node, {}).get(field) is None and (node, field) not in skipped]
    return Verdict(not problems, "required fields filled or skipped, no open conflict", tuple(problems), not_understood)


def _mismatches(values: dict[str, dict[str, Scalar | None]], expected: Expected) -> list[str]:
    out = []
    for node, fields in expected.items():
        for field, want in fields.items():
            got = values.get(node, {}).get(field)
            if not same(got, want):
                out.append(f"{node}.{field}: expected {want!r}, got {got!r}")
    return out


def same(got: Scalar | None, want: Scalar | None) -> bool:
    """Equal values; numbers as numbers (80000 == 80000.0), but a boolean is not a number."""
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, int | float) and isinstance(want, int | float):
        return abs(float(got) - float(want)) < 1e-9
    return got == want
