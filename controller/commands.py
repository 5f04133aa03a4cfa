"""What each CLI command does, given parsed arguments and the settings."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from agents.bank_parser.coders import make_coder
from agents.bank_parser.evaluate import IMAGE_NAME, execute_parser, judge, parser_spec
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.state import NodeEvent
from controller.artifacts import new_run_id
from controller.errors import TargetError
from controller.images.builder import available_images
from controller.progress import Progress
from controller.services import Services
from controller.settings import Settings
from controller.targets import resolve_target


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the parser agent on one target; exit 0 passed, 1 gave up."""
    target = resolve_target(args.target, settings.data_dir)
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        image = services.image(IMAGE_NAME)
        run_id = new_run_id(target.name)
        progress.say(f"run {run_id}: {target.name} ({target.pdf.name}), up to {settings.max_attempts} attempt(s)")

        def on_event(event: NodeEvent) -> None:
            progress.step(event.attempt, event.node, event.outcome, event.seconds, event.detail)

        summary = run_parser_agent(
            run_id=run_id, target=target, settings=settings, sandbox=services.sandbox,
            image=image, coder=make_coder(settings), on_event=on_event,
        )
    finally:
        services.close()
    progress.summary(summary)
    return summary.exit_code


def check(args: argparse.Namespace, settings: Settings) -> int:
    """Run an existing parser through the sandbox and the comparison; exit 0 pass, 1 fail."""
    target = resolve_target(args.target, settings.data_dir)
    code = _read_parser(Path(args.parser))
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        spec = parser_spec(services.image(IMAGE_NAME), code, target.pdf.read_bytes(), settings.sandbox,
                           {"agent": "check", "target": target.name})
        execution = execute_parser(services.sandbox, spec)
    finally:
        services.close()
    comparison = judge(execution, target.expected_csv)
    seconds = execution.sandbox.wall_seconds
    if execution.failure is not None:
        print(f"FAIL {args.parser}: {execution.failure.value}: {execution.message} ({seconds:.2f}s in the sandbox)")
        if execution.detail:
            print(execution.detail.rstrip())
        return 1
    if comparison is None:
        print(f"UNVERIFIED {args.parser}: {execution.message}; {target.name} has no result.csv")
        return 0
    print(f"{'PASS' if comparison.passed else 'FAIL'} {args.parser}: {comparison.summary()} ({seconds:.2f}s in the sandbox)")
    if not comparison.passed:
        print(comparison.report())
    return 0 if comparison.passed else 1


def images(args: argparse.Namespace, settings: Settings) -> int:
    """Build every sandbox image that is missing."""
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        for name in available_images(settings):
            progress.say(f"{name}: {services.image(name)}")
    finally:
        services.close()
    return 0


def bench(args: argparse.Namespace, settings: Settings) -> int:
    """Time a parser through the sandbox and as a plain local process (see controller.bench)."""
    from controller.bench import run_bench

    return run_bench(args, settings)


def _read_parser(path: Path) -> str:
    if not path.is_file():
        raise TargetError(f"no parser file {path}", hint="pass the path of a .py file that defines parse(pdf_path)")
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
