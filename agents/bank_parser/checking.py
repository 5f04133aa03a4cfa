"""``controller check`` for the bank-statement parser agent: run existing parsers through the sandbox and the
comparison.

One parser or many (files or folders of them, e.g. a class's challenge submissions). Each
runs in its own fresh sandbox, several at once (bounded), with a progress line per parser,
a table at the end and ``N passed, M failed`` as the last line. Nothing is generated and
nothing a parser returns is trusted beyond the JSON the sandbox hands back.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from agents.bank_parser.analysis import Analysis, analyze
from agents.bank_parser.compare import Comparison
from agents.bank_parser.evaluate import Execution, execute_parser, judge, parser_spec
from agents.bank_parser.statement_reader import StatementReader, scan_cache
from agents.bank_parser.target import Target
from agents.bank_parser.verify import Verification, check_consistency
from agents.ports.config import AgentConfig
from agents.ports.errors import TargetError
from agents.ports.events import Say
from agents.ports.run import CheckVerdict
from agents.ports.sandbox import Sandbox

FIRST_DIFF_WIDTH = 60


@dataclass(frozen=True)
class CheckOutcome:
    """One parser's verdict."""

    parser: str
    status: str  # pass | self-consistent | fail | unverified
    execution: Execution
    comparison: Comparison | None
    #: Without result.csv: the frame against the statement's own figures (issue 15).
    verification: Verification | None = None

    @property
    def rows(self) -> str:
        """Rows returned, or '-' when the parser returned nothing."""
        frame = self.execution.frame
        return "-" if frame is None else str(len(frame))

    @property
    def first_difference(self) -> str:
        """The first thing that is wrong, in a few words."""
        if self.execution.failure is not None:
            return f"{self.execution.failure.value}: {self.execution.message}"
        if self.comparison is None:
            return "" if self.status != "fail" or self.verification is None else self.verification.summary()
        if self.comparison.passed:
            return ""
        cells = self.comparison.cells
        if cells:
            cell = cells[0]
            return f"row {cell.row} {cell.column!r}: expected {cell.expected}, got {cell.actual}"
        return self.comparison.summary()


def read_parser(path: Path) -> str:
    """The parser's source; a syntax error is left for the sandbox to report."""
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"cannot read {path} as UTF-8 text ({type(exc).__name__})") from exc
    try:
        ast.parse(code, filename=str(path))
    except SyntaxError as exc:
        print(f"note: {path} has a syntax error at line {exc.lineno}; the sandbox will report it",
              file=sys.stderr)
    return code


def check_one(sandbox: Sandbox, image: str, target: Target, settings: AgentConfig, path: Path, code: str,
              analysis: Analysis | None = None) -> CheckOutcome:
    """Run one parser in a fresh sandbox and judge it: against result.csv, else by self-consistency.

    ``analysis`` (with the statement's own figures) is needed only without result.csv; as in
    ``run``, a frame then passes only when it is self-consistent.
    """
    labels = {"agent": "check", "target": target.name}
    spec = parser_spec(image, code, target.pdf.read_bytes(), settings.limits, labels)
    execution = execute_parser(sandbox, spec)
    comparison = judge(execution, target.expected_csv)
    if execution.failure is not None:
        return CheckOutcome(str(path), "fail", execution, comparison)
    if comparison is not None:
        return CheckOutcome(str(path), "pass" if comparison.passed else "fail", execution, comparison)
    verification = check_consistency(execution, analysis) if analysis is not None else None
    if verification is None:
        return CheckOutcome(str(path), "unverified", execution, None)
    status = "self-consistent" if verification.self_consistent else "fail"
    return CheckOutcome(str(path), status, execution, None, verification)


def check_many(
    sandbox: Sandbox, image: str, target: Target, settings: AgentConfig, parsers: list[Path],
    jobs: int, say: Say,
) -> list[CheckOutcome]:
    """Check every parser, ``jobs`` at a time; return the outcomes in the parsers' order."""
    sources = {path: read_parser(path) for path in parsers}
    # No result.csv: the statement's own figures judge every parser (read once, in a sandbox).
    labels = {"agent": "bank_parser", "target": target.name, "attempt": "analysis"}
    reader = StatementReader(sandbox, image, settings.limits, settings.analysis, labels, scan_cache(settings.runs_dir))
    analysis = analyze(target.pdf, None, reader) if target.expected_csv is None else None
    outcomes: dict[Path, CheckOutcome] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="sandloop-check") as pool:
        futures = {pool.submit(check_one, sandbox, image, target, settings, path, code, analysis): path
                   for path, code in sources.items()}
        for done, future in enumerate(as_completed(futures), start=1):
            outcome = future.result()
            outcomes[futures[future]] = outcome
            say(f"[{done}/{len(parsers)}] {outcome.status.upper():<10} {outcome.parser} "
                         f"({outcome.execution.sandbox.wall_seconds:.2f}s)")
    return [outcomes[path] for path in parsers]


def verdicts(outcomes: list[CheckOutcome], given: list[str]) -> list[CheckVerdict]:
    """The outcomes as verdicts, each named relative to the file or folder it was given as."""
    return [CheckVerdict(shown_name(Path(o.parser), given), o.status,
                         None if o.execution.frame is None else len(o.execution.frame),
                         round(o.execution.sandbox.wall_seconds, 3), o.first_difference) for o in outcomes]


def shown_name(path: Path, given: list[str]) -> str:
    """``path`` relative to the folder it was found in, or its file name when it was given itself."""
    for raw in given:
        root = Path(raw)
        if path == root:
            return path.name
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return path.name


def print_report(outcomes: list[CheckOutcome]) -> None:
    """Details for a single parser, a table for several, and the closing count line."""
    if len(outcomes) == 1:
        _print_single(outcomes[0])
    else:
        _print_table(outcomes)
    passed = sum(o.status in ("pass", "self-consistent") for o in outcomes)
    failed = sum(o.status == "fail" for o in outcomes)
    unverified = len(outcomes) - passed - failed
    print(f"{passed} passed, {failed} failed" + (f", {unverified} unverified" if unverified else ""))


def _print_single(outcome: CheckOutcome) -> None:
    execution, seconds = outcome.execution, outcome.execution.sandbox.wall_seconds
    # A failure's message names every limit the execution hit already; other verdicts add them.
    hit = f"; limits hit: {execution.limits}" if execution.limits else ""
    if execution.failure is not None:
        print(f"FAIL {outcome.parser}: {execution.failure.value}: {execution.message} ({seconds:.2f}s in the sandbox)")
        if execution.detail:  # the sandbox's text, indented: none of its lines can pass for ours
            print(textwrap.indent(execution.detail.rstrip(), "  | ", lambda line: True))
    elif outcome.verification is not None:
        word = "SELF-CONSISTENT" if outcome.status == "self-consistent" else "FAIL"
        print(f"{word} {outcome.parser}: no result.csv; {outcome.verification.summary()} "
              f"({seconds:.2f}s in the sandbox{hit})")
        if outcome.status == "fail":
            print(outcome.verification.report())
    elif outcome.comparison is None:
        print(f"UNVERIFIED {outcome.parser}: {execution.message}; the target has no result.csv")
    else:
        word = "PASS" if outcome.comparison.passed else "FAIL"
        print(f"{word} {outcome.parser}: {outcome.comparison.summary()} ({seconds:.2f}s in the sandbox{hit})")
        if not outcome.comparison.passed:
            print(outcome.comparison.report())


def _print_table(outcomes: list[CheckOutcome]) -> None:
    width = max(len("parser"), *(len(o.parser) for o in outcomes))
    print(f"\n{'parser':<{width}}  {'outcome':<10} {'rows':>5} {'time':>7}  first difference")
    for o in outcomes:
        diff = o.first_difference
        diff = diff if len(diff) <= FIRST_DIFF_WIDTH else diff[: FIRST_DIFF_WIDTH - 1] + "…"
        print(f"{o.parser:<{width}}  {o.status:<10} {o.rows:>5} {o.execution.sandbox.wall_seconds:6.2f}s  {diff}")
    for o in outcomes:  # the table's column is cut short: every limit hit is named in full below it
        if o.execution.limits:
            print(f"limits hit by {o.parser}: {o.execution.limits}")

__all__ = ["CheckOutcome", "check_many", "print_report", "verdicts"]
