"""The outcome port: what a run ended with, as written to ``summary.json`` and shown at the end.

An agent may subclass :class:`RunSummary` to add fields and say its verdict in its own words."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agents.ports.status import EXIT_CODES

#: ``summary.json``'s schema version.
SUMMARY_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RunSummary:
    """What a run ended with; ``to_json`` is the ``summary.json`` document."""

    run_id: str
    agent: str
    target: str
    status: str
    attempts: int
    max_attempts: int
    parser_path: str
    """The published artefact (a parser, a module); the name is summary.json's since schema 1."""
    run_dir: str
    wall_seconds: float
    sandbox_seconds: float
    coder: str
    failures: list[str] = field(default_factory=list)
    last_problem: str = ""
    verified: str = ""
    """How the published parser was verified: compared, self-consistent, both, or '' (issue 15)."""
    checks: str = ""
    """The self-consistency checks of the last attempt, in one line (issue 15)."""

    @property
    def exit_code(self) -> int:
        """0 passed or unverified, 1 failed or no-go (agents.ports.status)."""
        return EXIT_CODES.get(self.status, 1)

    def to_json(self) -> dict[str, Any]:
        """The ``summary.json`` document."""
        return {"schema_version": SUMMARY_SCHEMA_VERSION, **asdict(self)}

    def verdict(self) -> str:
        """The first line of the closing block (an agent's summary says it in its own words)."""
        return f"{self.status.upper()}: {self.agent} on {self.target}"

    def lines(self) -> list[str]:
        """The closing block a person reads."""
        lines = [
            "",
            self.verdict(),
            f"  target        {self.target} ({self.agent}, coder {self.coder})",
            f"  attempts      {self.attempts} of {self.max_attempts}",
            f"  {self.artefact_label:<13} {self.parser_path or '(not published; see the attempts in the run folder)'}",
            f"  artefacts     {self.run_dir}",
            f"  wall time     {self.wall_seconds:.1f} s",
            f"  in sandboxes  {self.sandbox_seconds:.1f} s",
        ]
        if self.checks:
            lines.append(f"  checks        {self.checks}")
        if self.status == "failed" and self.last_problem:
            lines.append(f"  last problem  {self.last_problem}")
        return lines

    @property
    def artefact_label(self) -> str:
        """What the published artefact is called in the closing block."""
        return "artefact"
