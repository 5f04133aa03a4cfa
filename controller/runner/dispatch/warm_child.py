"""What runs inside a warm run process: the CLI, in a fork of a parent that imported everything.

A warm run process (:mod:`controller.runner.dispatch.launch`) is forked from multiprocessing's
fork server, which imported :data:`PRELOAD` once when the service started. Here, in the fork,
it becomes exactly what a cold ``python -m controller run`` child is: its own process group,
the standard streams the worker gave it (stdin a pipe the service never writes to, stdout the
pipe the journal reads, stderr the worker's file), the run's own environment, then the CLI's
``main`` and its exit status. Nothing of one run reaches the next: each is a new fork of the
same untouched parent, which never runs anything itself.

The fork server imports this module and the ones it names; it opens no engine connection,
store or thread (only imports), so a fork shares nothing it should not.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

#: What the fork server imports once: the CLI with every command, the registry with every
#: agent, and what a run imports lazily (the graph engine, the checkpointer, the engine client,
#: the statement readers). Found by running each kind of run warm and listing what it still
#: imported after the fork (the ``warm: imported after the fork`` line names any that is missing).
#: The CLI's module, whose ``main`` each fork runs.
CLI = "controller.entry.cli"
PRELOAD = (
    CLI,
    "controller.entry.commands",
    "controller.runner.agent_runner",
    "controller.runner.services",
    "agents.registry",
    "langgraph.graph",
    "langgraph.checkpoint.sqlite",
    "docker",
    "pandas",
    "pdfplumber",
    "agents.bank_parser.coders.offline",
    "agents.bank_parser.coders._preview",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "pandas.core.methods.to_dict",
)
#: How the line naming modules imported after the fork starts (the worker logs it).
LATE_PREFIX = "warm: imported after the fork: "
#: Top-level packages whose import after the fork means the preload missed them (a cost paid per run).
WATCHED = frozenset({"agents", "controller", "langgraph", "langchain_core", "pandas", "numpy", "pdfplumber",
                     "pdfminer", "docker", "pydantic", "structlog", "sqlalchemy"})


def preload(modules: Iterable[str] = PRELOAD) -> None:
    """Import ``modules`` (in the fork server, once)."""
    for name in modules:
        __import__(name)


def run(argv: Sequence[str], env: dict[str, str], stdin: int, stdout: int, stderr: int) -> None:
    """The body of a warm run process: become the run's process, run the CLI, exit with its status."""
    os.setpgid(0, 0)  # its own group, as a cold child's process_group=0: a cancel reaches all it started
    _streams(stdin, stdout, stderr)
    os.environ.clear()
    os.environ.update(env)
    before = set(sys.modules)
    # By name: the CLI is preloaded (no import happens here), and a static import would close a
    # cycle (the CLI starts the service, whose workers fork this).
    status = _main(importlib.import_module(CLI).main, argv)
    late = late_imports(before, sys.modules)
    if late:  # the next run pays for them again: the preload should name them
        print(f"{LATE_PREFIX}{', '.join(late[:20])}", file=sys.stderr)
    atexit._run_exitfuncs()  # multiprocessing ends a child with os._exit: run the CLI's exit handlers here
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    sys.exit(status)


def _main(main: Any, argv: Sequence[str]) -> int:
    try:
        return int(main(list(argv)))
    except SystemExit as exc:  # argparse's refusal or --help: its status, as the cold CLI exits
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except KeyboardInterrupt:  # an interrupt before the CLI's own handler was reached
        return 130


def ready() -> None:
    """A fork that does nothing: the first one waits until the fork server has imported the preload."""


def late_imports(before: Iterable[str], now: Iterable[str]) -> list[str]:
    """The watched modules imported after the fork (their top-level names' first modules, sorted)."""
    known = set(before)
    return sorted({name for name in now if name not in known and name.partition(".")[0] in WATCHED})


def _streams(stdin: int, stdout: int, stderr: int) -> None:
    """Put the worker's descriptors on 0, 1 and 2 and rebuild the standard streams over them."""
    for source, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        if source != target:
            os.dup2(source, target)
            os.close(source)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own stdin
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
