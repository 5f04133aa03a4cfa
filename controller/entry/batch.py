"""``run --all``: every target in data/, a few at a time, progress across them, a closing table.

Each target runs as its own child process, ``python -m controller run --target NAME`` with
the same options, so a batch does exactly what single runs do (agent dispatch, coder
checks, observability, publishing) and runs share nothing in memory: each has its own run
id and run folder, its own containers and its own ``events.jsonl``; parsers are published
per target, atomically; the history files are SQLite, made for concurrent writers. A
target is run once per batch. Before the children start, the parent reaps leftovers and
makes sure of the parser image once, so that they never race to build it.

Targets that follow one another (target.toml ``follows``: seed 002's Day 1 → Day 2) are a
**chain** (:mod:`agents.target_chains`): run in order, one after the other, as one unit of
the batch, under a subject scoped to this batch and chain (``Maria Silva @run-all-<time>-<hex>``),
so every batch starts each chain from an empty memory and two batches never share one. A
target after one that ended without a verdict (an error, an interrupt) is ``skipped``.

At most ``settings.parallel_runs`` children run at once (a thread per child relays its
progress lines, prefixed with the target). Ctrl-C passes SIGINT to the running children,
which remove their containers, and the batch ends with the table of what finished.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import TextIO

from agents.ports import status as statuses
from agents.ports.artefacts import SUMMARY_FILE
from agents.ports.errors import ConfigError, PlatformError, TargetError
from agents.ports.memory import check_subject
from agents.registry import agent_for_target
from agents.target_chains import Chain, chains
from agents.targets import known_targets
from controller.platform.settings import Settings, child_env
from controller.runner.agent_runner import Runner

#: Status of a target by the child's exit code, when it left no summary.json to read.
STATUS_BY_EXIT = {
    0: "passed", 1: "failed", 2: "error", 3: "error", 130: "interrupted",
    -signal.SIGINT: "interrupted",  # stopped before Python could turn SIGINT into exit 130
}  # fmt: skip
STOPPED = frozenset({"interrupted", "not run"})
#: A run that ended with one of these reached a verdict: a target that follows it runs after it.
VERDICTS = frozenset(statuses.VERDICTS)
#: ``run`` options passed on to every child when given (argparse dest -> option).
FORWARDED = {"max_attempts": "--max-attempts", "coder": "--coder", "model": "--model"}
#: The child's first line naming its run (run ids are letters, digits, '-' and '_' only).
RUN_LINE = re.compile(r"^==> run ([A-Za-z0-9_-]+): ")
#: A subject's longest name (agents.ports.memory.SUBJECT_PATTERN).
SUBJECT_CHARS = 80


@dataclass(frozen=True)
class TargetResult:
    """How one target's run ended, as the closing table shows it."""

    target: str
    status: str
    attempts: int | None
    max_attempts: int | None
    seconds: float
    run_dir: str = ""
    note: str = ""
    verified: str = ""  # issue 15: compared / self-consistent / both

    @property
    def ok(self) -> bool:
        """Passed, or ran without a result.csv to check against."""
        return self.status in statuses.OK


class Board:
    """Thread-safe progress output for many targets at once."""

    def __init__(self, stream: TextIO, targets: Sequence[str]) -> None:
        self.stream = stream
        self.width = max((len(t) for t in targets), default=6)
        self.total = len(targets)
        self.done = 0
        self._lock = threading.Lock()

    def say(self, message: str) -> None:
        """A line of the batch itself."""
        self._print(f"==> {message}")

    def relay(self, target: str, line: str) -> None:
        """A progress line of one target's run."""
        self._print(f"  {target:<{self.width}} {line.strip()}")

    def finished(self, result: TargetResult) -> None:
        """One target is done: count it and say how it ended."""
        with self._lock:
            self.done += 1
            done = self.done
        self.say(
            f"[{done}/{self.total}] {result.target}: {result.status}"
            f"{_attempts_phrase(result)}, {result.seconds:.1f} s"
        )

    def _print(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream, flush=True)


def _attempts_phrase(result: TargetResult) -> str:
    return f" after {result.attempts} attempt(s)" if result.attempts else ""


def run_all(args: argparse.Namespace, settings: Settings, stream: TextIO = sys.stdout) -> int:
    """Run every target in ``settings.data_dir``; exit 0 when all passed (or unverified), else 1.

    Raises:
        TargetError: there is no target at all.
        ConfigError: ``--subject`` given, or targets that follow one another wrongly (a cycle, ...).
        EngineUnavailable: no Docker engine answers (before any child starts).
        KeyboardInterrupt: after the children were stopped and the table printed.
    """
    names = known_targets(settings.data_dir)
    if not names:
        raise TargetError(
            f"no targets in {settings.data_dir}",
            hint="add a folder <name>/ with a statement PDF (and result.csv) there, "
            "or point SBX_DATA_DIR at one",
        )
    if settings.subject is not None:  # --subject, or SBX_SUBJECT: every child would share it
        raise ConfigError("--subject (SBX_SUBJECT) does not go with --all: a batch scopes a subject of its own to "
                          "each chain", hint="to choose the subject, run one target: run --target NAME --subject NAME")
    units = scoped(chains(settings.data_dir, names), batch_scope)
    board = Board(stream, names)
    jobs = min(settings.parallel_runs, len(units))
    board.say(f"{len(names)} target(s) in {settings.data_dir}, {jobs} at a time")
    for unit in units:
        if unit.conversation:
            board.say(f"{' → '.join(unit.targets)}: in order, with subject {unit.subject!r} (this batch's)")
    prepare(settings, board.say)
    runner = BatchRunner(settings, child_options(args), board)
    try:
        results = runner.run(units, jobs)
    except KeyboardInterrupt:
        print_table(runner.results_so_far(_order(units)), stream)
        raise
    print_table(results, stream)
    return 0 if all(r.ok for r in results) else 1


def batch_scope() -> str:
    """A name for one chain of one batch: the time and 32 random bits."""
    return f"run-all-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


def scoped(units: Sequence[Chain], scope: Callable[[], str]) -> list[Chain]:
    """``units`` with each conversation's subject scoped to this batch and chain: the subject
    the chain names (else its first target), then `` @`` and a scope of its own (``scope()``)."""
    out: list[Chain] = []
    for unit in units:
        if unit.conversation:
            suffix = f" @{scope()}"
            base = (unit.subject or unit.targets[0])[: SUBJECT_CHARS - len(suffix)].rstrip(" .@'-_")
            unit = replace(unit, subject=check_subject(base + suffix))
        out.append(unit)
    return out


def _order(units: Sequence[Chain]) -> list[str]:
    return [name for unit in units for name in unit.targets]


def prepare(settings: Settings, say: Callable[[str], None]) -> None:
    """Reap leftovers and make sure of the targets' agents' images once, before any child starts.

    An image that cannot be built is left for its targets' runs to report, one line each.
    """
    images: dict[str, None] = {}
    for name in known_targets(settings.data_dir):
        try:
            agent = agent_for_target(settings.data_dir, name)
        except PlatformError:
            continue  # the target's own run reports it
        images.update(dict.fromkeys(agent.info.images[:1]))  # none: an agent that runs nothing in a sandbox
    if images:
        Runner(settings, say=say).images(list(images), report=False)


def child_options(args: argparse.Namespace) -> list[str]:
    """The ``run`` options given on the command line, to pass on to every child."""
    out: list[str] = []
    for dest, option in FORWARDED.items():
        value = getattr(args, dest, None)
        if value is not None and value != "":
            out += [option, str(value)]
    return out


class BatchRunner:
    """Runs targets as child processes, at most ``jobs`` at once, and collects their results."""

    def __init__(self, settings: Settings, options: Sequence[str], board: Board) -> None:
        self.settings = settings
        self.options = list(options)
        self.board = board
        self.env = child_env(settings)
        self._lock = threading.Lock()
        self._running: dict[str, subprocess.Popen[str]] = {}
        self._results: dict[str, TargetResult] = {}
        self._stopping = False

    def run(self, units: Sequence[Chain], jobs: int) -> list[TargetResult]:
        """Run every chain (its targets in order), ``jobs`` chains at once; the results in chain order."""
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="sandloop-batch")
        futures: list[Future[None]] = [pool.submit(self.run_chain, unit) for unit in units]
        try:
            for future in as_completed(futures):
                future.result()
        except KeyboardInterrupt:
            self.interrupt()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return [self._results[name] for name in _order(units)]

    def run_chain(self, unit: Chain) -> None:
        """Run the chain's targets one after the other (its subject given to each); a target after one
        that ended without a verdict is skipped, or not run once the batch is stopping."""
        extra = ["--subject", unit.subject] if unit.conversation and unit.subject else []
        before: TargetResult | None = None
        for name in unit.targets:
            if before is not None and before.status not in VERDICTS:
                result = self._not_after(name, before)
            else:
                result = self.run_one(name, extra)
            self.board.finished(result)
            before = result

    def _not_after(self, name: str, before: TargetResult) -> TargetResult:
        """The result of a target not run because the one it follows ended ``before.status``."""
        with self._lock:
            stopping = self._stopping
        result = TargetResult(name, "not run" if stopping else "skipped", None, None, 0.0,
                              note=f"not run: it follows {before.target}, which ended {before.status}")
        with self._lock:
            self._results[name] = result
        return result

    def results_so_far(self, names: Sequence[str]) -> list[TargetResult]:
        """Finished targets' results, and 'not run' for the others (after an interrupt)."""
        return [
            self._results.get(name, TargetResult(name, "not run", None, None, 0.0))
            for name in names
        ]

    def interrupt(self) -> None:
        """Pass SIGINT to every running child (each removes its containers and exits 130);
        start no more."""
        with self._lock:
            self._stopping = True
            running = list(self._running.values())
        for proc in running:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)

    def run_one(self, name: str, extra: Sequence[str] = ()) -> TargetResult:
        """Run one target's child process (with ``extra`` options) to its end and read how it went."""
        started = time.monotonic()
        try:
            code, run_id, tail = self._child(name, extra)
        except OSError as exc:  # the interpreter could not be started: say so in the table
            code, run_id, tail = 3, None, f"error: cannot start a run: {exc}"
        if code is None:  # interrupted before it started
            result = TargetResult(name, "not run", None, None, 0.0)
        else:
            result = outcome(name, code, self._summary(run_id), time.monotonic() - started, tail)
        with self._lock:
            self._results[name] = result
        return result

    def _child(self, name: str, extra: Sequence[str]) -> tuple[int | None, str | None, str]:
        """Run the child; (exit code or None if not started, its run id, its stderr's end)."""
        command = [sys.executable, "-m", "controller", "run", "--target", name, *self.options, *extra]
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
            with self._lock:
                if self._stopping:
                    return None, None, ""
                # Its own process group: a Ctrl-C at the terminal reaches the batch only, which
                # passes exactly one SIGINT on (a second could cut a child's clean-up short).
                proc = subprocess.Popen(
                    command,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    text=True,
                    env=self.env,
                    encoding="utf-8",
                    errors="replace",
                    process_group=0,
                )
                self._running[name] = proc
            try:
                run_id = self._relay(name, proc)
                code = proc.wait()
            finally:
                with self._lock:
                    self._running.pop(name, None)
            errors.seek(0)
            return code, run_id, errors.read()[-8192:]

    def _relay(self, name: str, proc: subprocess.Popen[str]) -> str | None:
        """Show the child's progress lines (its closing summary is left for the table)."""
        run_id = None
        assert proc.stdout is not None
        for line in proc.stdout:
            match = RUN_LINE.match(line) if run_id is None else None
            if match:  # only the first: later lines may quote a parser's (hostile) messages
                run_id = match.group(1)
            if line.startswith(("==> ", "  [")):
                self.board.relay(name, line)
        return run_id

    def _summary(self, run_id: str | None) -> dict[str, object] | None:
        """The child's summary.json, if it got as far as writing one."""
        if run_id is None:
            return None
        try:
            summary = json.loads((self.settings.runs_dir / run_id / SUMMARY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return summary if isinstance(summary, dict) else None


def outcome(
    name: str, code: int, summary: dict[str, object] | None, seconds: float, stderr_tail: str = ""
) -> TargetResult:
    """A target's result from its child's exit code, summary.json (if any) and stderr."""
    if summary is not None and code in (0, 1):
        return TargetResult(
            target=name,
            status=str(summary.get("status", STATUS_BY_EXIT[code])),
            attempts=_int(summary.get("attempts")),
            max_attempts=_int(summary.get("max_attempts")),
            seconds=seconds,
            run_dir=str(summary.get("run_dir", "")),
            note=str(summary.get("last_problem", "")),
            verified=str(summary.get("verified", "")),
        )
    status = STATUS_BY_EXIT.get(code, "error")
    return TargetResult(name, status, None, None, seconds, note=_error_line(stderr_tail, code))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _error_line(stderr_tail: str, code: int) -> str:
    """The child's one-line error (``error: ...``), else its exit status."""
    lines = [
        line for line in stderr_tail.splitlines() if line.startswith(("error: ", "interrupted"))
    ]
    return lines[-1] if lines else f"exit status {code}"


def print_table(results: Sequence[TargetResult], stream: TextIO) -> None:
    """The closing table (target, status, attempts, time), problems, then 'N passed, M failed'."""
    width = max([len("target"), *(len(r.target) for r in results)])
    print("", file=stream)
    print(f"{'target':<{width}}  {'status':<15} {'attempts':>8}  {'time':>8}  verified", file=stream)
    for r in results:
        attempts = f"{r.attempts}/{r.max_attempts}" if r.attempts is not None else "-"
        print(
            f"{r.target:<{width}}  {r.status:<15} {attempts:>8}  {r.seconds:>6.1f} s  {r.verified or '-'}",
            file=stream,
        )
    problems = [r for r in results if not r.ok and r.note and r.status not in STOPPED]
    if problems:
        print("", file=stream)
        for r in problems:
            where = f" ({r.run_dir})" if r.run_dir else ""
            print(f"  {r.target}: {r.note}{where}", file=stream)
    unverified = sum(1 for r in results if r.status == "unverified")
    if unverified:
        print(f"{unverified} unverified (no result.csv to check against)", file=stream)
    stopped = sum(1 for r in results if r.status in STOPPED)
    if stopped:
        print(f"{stopped} interrupted or not run", file=stream)
    no_go = sum(1 for r in results if r.status == "no-go")
    if no_go:
        print(f"{no_go} no-go (the agent decided its inputs cannot support the work)", file=stream)
    passed = sum(1 for r in results if r.status in statuses.SUCCESS)
    failed = sum(1 for r in results if not r.ok and r.status not in STOPPED and r.status != "no-go")
    print(f"{passed} passed, {failed} failed", file=stream, flush=True)
