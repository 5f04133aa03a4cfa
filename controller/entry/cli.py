"""The command line: ``python -m controller {run,check,replay,memory,graph,images,serve,tokens,db,k8s}``.

Exit status: 0 the parser passed (or ran and cannot be verified), 1 the loop gave up or the
checked parser failed, 2 a usage or input error (or no Docker engine), 3 the environment
failed (image build, engine error), 75 the run waits for a reply (a service's intake run), 130
interrupted, 143 terminated (SIGTERM). A user's mistake is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from pydantic import ValidationError

from agents.ports.errors import PlatformError, RunPaused, invalid_setting
from controller.platform.observability.logs import (
    configure_logging,
    secret_values,
    settings_secrets,
)
from controller.platform.progress import OutputClosed
from controller.platform.settings import Settings, load_settings
from controller.platform.stop import PROCESS


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with every option documented for ``--help``."""
    parser = argparse.ArgumentParser(
        prog="python -m controller",
        description="Run coding-agent loops whose generated code executes only in throwaway "
        "Docker sandboxes. Settings come from SBX_* environment variables or .env.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a target's agent loop (or every target's): a parser, an Idris module, "
                                     "an intake conversation, a blueprint's report")
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--target", metavar="NAME",
                       help="a target: a folder under data/ (its target.toml names the agent: a bank "
                            "statement and result.csv, a document, a conversation's nodes, a blueprint)")
    which.add_argument("--all", action="store_true",
                       help="every target in data/, SBX_PARALLEL_RUNS (default 2) at a time; ends "
                            "with a table and 'N passed, M failed'")
    which.add_argument("--resume", metavar="RUN_ID",
                       help="continue an interrupted run from its last completed node (runs/RUN_ID/)")
    which.add_argument("--blueprint", metavar="FILE",
                       help="with --server: send a blueprint.json and the data and code files it names (from "
                            "its folder) to the service, which runs it with no folder of its own")
    run.add_argument("--max-attempts", type=int, metavar="N",
                     help="attempts before giving up (default: SBX_MAX_ATTEMPTS or 3)")
    run.add_argument("--coder", choices=("offline", "gemini", "openai", "ollama"),
                     help="who writes (the parser, the module, the intake roles' answers, the report): offline "
                          "rules or an LLM (default: SBX_CODER or offline)")
    run.add_argument("--interactive", action="store_true",
                     help="intake targets: ask each question here and read the reply from the terminal "
                          "(instead of the target's replies.txt); end of input ends the conversation; "
                          "with --server the replies go to the service, where the run waits for each")
    run.add_argument("--subject", metavar="NAME",
                     help="intake targets: the person the conversation is with (default: target.toml's subject); "
                          "their graph memory persists across runs (runs/memory/), so a later conversation starts "
                          "from its facts; not with --all, which scopes a subject to each chain of targets")
    run.add_argument("--model", metavar="NAME",
                     help="the LLM coder's model (default: SBX_LLM__MODEL or the provider's default)")
    run.add_argument("--server", metavar="URL",
                     help="submit the run (--target) to a sandloop service and follow it there; token from SBX_TOKEN")
    run.add_argument("--run-id", metavar="ID", help=argparse.SUPPRESS)  # the service's id for a run it accepted
    run.add_argument("--watch-stdin", action="store_true", help=argparse.SUPPRESS)  # the service's children
    run.add_argument("--await-replies", action="store_true", help=argparse.SUPPRESS)  # the service's intake runs

    check = sub.add_parser("check", help="judge existing artefacts (parsers, modules, conversations, reports) "
                                         "as the target's loop judges its own")
    check.add_argument("--target", required=True, metavar="NAME",
                       help="the target whose inputs judge them (a statement and result.csv, a document, a "
                            "conversation's nodes and expected facts, a blueprint's QA)")
    artefacts = check.add_mutually_exclusive_group(required=True)
    artefacts.add_argument("--parser", nargs="+", metavar="PATH",
                           help="parser files (each defining parse(pdf_path)) or folders of them")
    artefacts.add_argument("--module", nargs="+", metavar="PATH",
                           help="Idris modules (.idr files or folders of them) for an idris target: idris2 --check")
    artefacts.add_argument("--conversation", nargs="+", metavar="PATH",
                           help="scripted conversations (.txt files of replies, one a line, or folders of them) "
                                "for an intake target: judged like its run")
    artefacts.add_argument("--report", nargs="+", metavar="PATH",
                           help="reports (.md files or folders of them) for a blueprint target: its QA and validators")
    check.add_argument("--jobs", type=int, metavar="N",
                       help="parsers checked at once (default: SBX_PARALLEL_CHECKS or 2)")
    check.add_argument("--as-of", metavar="DATE",
                       help="resolve submissions' unpinned requirements as of DATE (YYYY-MM-DD); "
                            "default: each submission's last git commit date, else today")
    check.add_argument("--server", metavar="URL",
                       help="submit the check (parsers, submission folders or .zip files) to a sandloop service "
                            "and follow it there; token from SBX_TOKEN")
    check.add_argument("--run-id", metavar="ID", help=argparse.SUPPRESS)  # the service's id for a check it accepted
    check.add_argument("--watch-stdin", action="store_true", help=argparse.SUPPRESS)  # the service's children

    replay = sub.add_parser("replay", help="run a stored attempt again in a fresh sandbox; same or different outcome")
    replay.add_argument("run_id", metavar="RUN_ID", help="the run's id (its folder under runs/)")
    replay.add_argument("--attempt", type=int, metavar="N", help="which attempt (default: the last)")

    memory = sub.add_parser("memory", help="print a conversation's graph memory: nodes, each field's history, "
                                           "conflicts")
    whose = memory.add_mutually_exclusive_group(required=True)
    whose.add_argument("run_id", nargs="?", metavar="RUN_ID", help="a run of a conversational agent (intake)")
    whose.add_argument("--subject", metavar="NAME", help="a subject's memory across all its conversations")
    memory.add_argument("--json", action="store_true", help="the memory as JSON (agents.ports.memory.MemoryView)")

    graph = sub.add_parser("graph", help="print an agent's graph as Mermaid (LangGraph's own drawing)")
    graph.add_argument("--agent", required=True, metavar="NAME",
                       help="the agent (bank_parser, idris, intake, blueprint, ...; an unknown name lists them)")

    sub.add_parser("images", help="build every sandbox image that is missing")

    serve = sub.add_parser("serve", help="the service: runs over HTTP (/v1/runs, /docs), /metrics, /healthz, /readyz")
    serve.add_argument("--host", metavar="ADDR",
                       help="address to listen on (default: SBX_OBSERVABILITY__SERVE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, metavar="PORT",
                       help="port to listen on (default: SBX_OBSERVABILITY__SERVE_PORT or 9466)")
    serve.add_argument("--metrics-only", action="store_true",
                       help="only the exporter of the run history (/metrics, /healthz): no runs API, no workers")

    tokens = sub.add_parser("tokens", help="the service's bearer tokens: add (printed once), list, remove")
    tokens_sub = tokens.add_subparsers(dest="tokens_command", required=True, metavar="TOKENS_COMMAND")
    add = tokens_sub.add_parser("add", help="create a token and print it once (only its hash is kept)")
    add.add_argument("name", metavar="NAME", help="the token's name: the owner of the runs it submits")
    add.add_argument("--admin", action="store_true", help="may see and cancel every token's runs")
    tokens_sub.add_parser("list", help="list the tokens' names and rights")
    remove = tokens_sub.add_parser("remove", help="remove a token (its runs stay)")
    remove.add_argument("name", metavar="NAME", help="the token's name")

    db = sub.add_parser("db", help="the service's run store: upgrade its schema, or say which revision it has")
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="DB_COMMAND")
    db_sub.add_parser("upgrade", help="apply the migrations this release has and the store lacks (serve does too)")
    db_sub.add_parser("current", help="print the store's schema revision and this release's newest")

    k8s = sub.add_parser("k8s", help="Kubernetes: print the deployment and a sandbox Pod as YAML")
    k8s_sub = k8s.add_subparsers(dest="k8s_command", required=True, metavar="K8S_COMMAND")
    render = k8s_sub.add_parser("render",
                                help="print every object the deployment creates, and one sandbox's Pod + ConfigMap")
    render.add_argument("--part", choices=("all", "deploy", "sandbox", "tokens"), default="all",
                        help="deploy: the objects to apply; sandbox: what one execution creates (default: both); "
                             "tokens: the one-off Job making the service's first token")
    render.add_argument("--registry", metavar="PREFIX",
                        help="registry prefix of the images (default: SBX_KUBERNETES__REGISTRY)")

    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {}
    if getattr(args, "max_attempts", None) is not None:
        overrides["max_attempts"] = args.max_attempts
    if getattr(args, "coder", None) is not None:
        overrides["coder"] = args.coder
    if getattr(args, "interactive", False):
        overrides["interactive"] = True
    if getattr(args, "await_replies", False):
        overrides["await_replies"] = True
    if args.command == "run" and getattr(args, "subject", None) is not None:
        overrides["subject"] = args.subject
    if getattr(args, "model", None):
        overrides["llm"] = {"model": args.model}
    if getattr(args, "registry", None) is not None:  # k8s render --registry
        overrides["kubernetes"] = {"registry": args.registry}
    try:
        return load_settings(**overrides)
    except ValidationError as exc:
        raise invalid_setting(exc) from exc


Handler = Callable[[argparse.Namespace, Settings], int]


def _handler(args: argparse.Namespace) -> Handler:
    """The command's function. A run or check on a service (``--server``), ``tokens`` and ``k8s``
    never import the runner: the agents' graphs, LangGraph and pandas take seconds to load."""
    if getattr(args, "server", None):  # run and check take --server
        from controller.entry.service import client  # lazy: httpx only, for a remote run or check

        remote: Handler = {"run": client.run_remote, "check": client.check_remote}[args.command]
        return remote
    if args.command == "tokens":
        return _tokens
    if args.command == "db":
        return _db
    if args.command == "k8s":
        return _k8s
    if args.command == "memory":
        from controller.entry.memory_view import command as memory  # lazy: the registry, the memory store

        return memory
    from controller.entry import commands  # lazy: the runner and every agent, for the local commands only

    handler: Handler = getattr(commands, args.command)
    return handler


def _tokens(args: argparse.Namespace, settings: Settings) -> int:
    from controller.entry.service.tokens import command  # lazy: the service store, for tokens only

    return command(args, settings)


def _db(args: argparse.Namespace, settings: Settings) -> int:
    from controller.entry.service.db import command  # lazy: SQLAlchemy and Alembic, for db only

    return command(args, settings)


def _k8s(args: argparse.Namespace, settings: Settings) -> int:
    from controller.entry.k8s_render import command  # lazy: yaml and the pod spec builders, for k8s only

    return command(args, settings)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that every ``finally`` and context manager
    on the way out runs: the run's containers and volumes are removed as on Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    PROCESS.stop("SIGTERM")  # executions waiting in other threads stop too (controller.platform.stop)
    raise Terminated()


def _interrupt(signum: int, frame: object) -> None:
    PROCESS.stop("SIGINT")
    raise KeyboardInterrupt()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    with _stop_on_signals():
        return _main(args)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT throw the process's stop switch while the command runs; afterwards the
    previous handlers are back and the switch is reset (``main`` called in-process, as tests and
    the service's warm children do, leaves nothing behind)."""
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig, handler in ((signal.SIGTERM, _terminate),
                                                                      (signal.SIGINT, _interrupt))}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        PROCESS.reset()


def _main(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
        configure_logging(settings.log_format, settings.observability.log_level,
                          secrets=[*secret_values(os.environ), *settings_secrets(settings)])
        return _handler(args)(args, settings)
    except RunPaused as exc:  # not an error: the run waits, checkpointed (its line was printed)
        return exc.exit_code
    except PlatformError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("terminated: containers of this run were removed", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("interrupted: containers of this run were removed", file=sys.stderr)
        return 130
    except OutputClosed as closed:  # a run's reader went away: stopped as on Ctrl-C, resumable
        _quiet_stdout()
        print(closed.one_line(), file=sys.stderr)
        return 141
    except BrokenPipeError:  # the reader went away (`… | head`): stop quietly, as shell tools do
        _quiet_stdout()
        return 141
    except Exception as exc:  # noqa: BLE001 - a bug still ends in one line, exit 3, never a traceback
        print(f"error: unexpected {type(exc).__name__} "
              f"({str(exc).splitlines()[0][:200] if str(exc) else 'no message'}); "
              "a bug in sandloop: please report it with the run's events.jsonl", file=sys.stderr)
        return 3


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def exit_now(status: int) -> None:
    """End the process with ``status`` once everything is written, skipping the interpreter's
    teardown (half a second with LangGraph, pandas and pydantic loaded, for nothing).

    Exit handlers still run and the standard streams are flushed; with any other non-daemon
    thread still alive (its work might not be done) the process exits the normal way instead,
    which waits for it. Daemon threads (the service child's stdin watch) do not count: the
    normal exit would not wait for them either.
    """
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.current_thread()):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
