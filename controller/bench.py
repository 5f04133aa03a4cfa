"""``make bench``: what isolation costs, and what the warm pool wins back.

From one run, for the target's parser (the offline coder's first candidate), at least ten
repetitions each of: the parser called in this process, a fresh local Python process
running the sandbox's entrypoint, a cold sandbox and a warm sandbox (both end to end as the
controller sees them: copy in, run, collect, remove). Then the wall time of ``check`` on
50 generated parsers with the pool. Prints medians, p95 and ratios; asserts nothing.

The in-process and local-process figures execute that parser on the host without
isolation. They are yardsticks for this benchmark only and use the offline coder's
deterministic output, never code from an LLM; nothing else in the platform runs generated
code outside a sandbox.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agents.bank_parser.analysis import analyze
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.evaluate import IMAGE_NAME, execute_parser, parser_spec
from controller.progress import Progress
from controller.sandbox.docker import DockerSandbox
from controller.sandbox.labels import this_owner
from controller.services import Services
from controller.settings import Settings
from controller.targets import Target, resolve_target

CHECK_PARSERS = 50


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    """Run every measurement and print the figures."""
    target = resolve_target(args.target, settings.data_dir)
    repeat = max(10, int(args.repeat))
    progress = Progress()
    analysis = analyze(target.pdf, target.expected_csv)
    candidates = [c.code for c in OfflineCoder().candidates(analysis)]
    code = candidates[0]
    services = Services.start(settings, progress.say)
    figures: dict[str, list[float]] = {}
    try:
        image = services.image(IMAGE_NAME)
        figures["in-process parse()"] = _in_process(code, target, repeat, progress)
        figures["fresh local process"] = _local_process(code, target, settings, repeat, progress)
        figures["cold sandbox"] = _sandbox(services, image, code, target, settings, repeat, 0, progress)
        figures["warm sandbox"] = _sandbox(services, image, code, target, settings, repeat, 1, progress)
    finally:
        services.close()
    check_seconds, check_line = _check_many(candidates, target, settings, progress)
    _print(target.name, figures, check_seconds, check_line)
    return 0


def _timed(repeat: int, once: Callable[[], None]) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    return times


def _in_process(code: str, target: Target, repeat: int, progress: Progress) -> list[float]:
    progress.say(f"in-process parse() x{repeat}")
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-") as tmp:
        path = Path(tmp) / "bench_parser.py"
        path.write_text(code, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("bench_parser", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return _timed(repeat, lambda: module.parse(str(target.pdf)))


def _local_process(code: str, target: Target, settings: Settings, repeat: int, progress: Progress) -> list[float]:
    progress.say(f"fresh local process x{repeat}")
    entrypoint = settings.images_dir / IMAGE_NAME / "entrypoint.py"
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-") as tmp:
        parser = Path(tmp) / "parser.py"
        parser.write_text(code, encoding="utf-8")
        argv = [sys.executable, "-I", str(entrypoint), str(parser), str(target.pdf.resolve()), str(Path(tmp) / "out.json")]
        return _timed(repeat, lambda: subprocess.run(argv, check=True, capture_output=True, cwd=tmp, timeout=300))


def _sandbox(
    services: Services, image: str, code: str, target: Target, settings: Settings,
    repeat: int, pool_size: int, progress: Progress,
) -> list[float]:
    progress.say(f"{'warm' if pool_size else 'cold'} sandbox x{repeat}")
    backend = DockerSandbox(services.client, user=settings.sandbox_user, owner=this_owner(),
                            pool_size=pool_size, pool_max_idle_seconds=600)
    spec = parser_spec(image, code, target.pdf.read_bytes(), settings.sandbox, {"agent": "bench"})
    times = []
    try:
        backend.prewarm(spec)
        for _ in range(repeat):
            _wait_for_warm(backend)
            started = time.perf_counter()
            execution = execute_parser(backend, spec)
            times.append(time.perf_counter() - started)
            if execution.failure is not None:
                print(f"warning: sandboxed run failed: {execution.message}", file=sys.stderr)
    finally:
        backend.close()
    return times


def _wait_for_warm(backend: DockerSandbox, timeout: float = 60) -> None:
    """Untimed: let the pool refill, so each warm figure is one handover, not a refill."""
    deadline = time.monotonic() + timeout
    while backend.pool is not None and backend.pool.idle_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)


def _check_many(candidates: list[str], target: Target, settings: Settings, progress: Progress) -> tuple[float, str]:
    progress.say(f"check of {CHECK_PARSERS} generated parsers ({len(candidates)} distinct), pool on")
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-check-") as tmp:
        for index in range(CHECK_PARSERS):
            (Path(tmp) / f"parser_{index:02d}.py").write_text(candidates[index % len(candidates)], encoding="utf-8")
        env = {**os.environ, "SBX_DATA_DIR": str(settings.data_dir.resolve()), "SBX_LOG_FORMAT": "json"}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "controller", "check", "--target", target.name, "--parser", tmp],
            capture_output=True, text=True, env=env, timeout=3600, check=False,
        )
        seconds = time.perf_counter() - started
    lines = proc.stdout.strip().splitlines()
    return seconds, lines[-1] if lines else f"exit {proc.returncode}"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _print(target: str, figures: dict[str, list[float]], check_seconds: float, check_line: str) -> None:
    repeat = len(next(iter(figures.values())))
    print(f"\n{target} parser, wall time per execution, {repeat} repetitions "
          f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})")
    print(f"  {'way':<22} {'median':>8} {'p95':>8}")
    for name, values in figures.items():
        print(f"  {name:<22} {statistics.median(values):7.3f}s {_p95(values):7.3f}s")
    fresh = statistics.median(figures["fresh local process"])
    warm = statistics.median(figures["warm sandbox"])
    cold = statistics.median(figures["cold sandbox"])
    print(f"  warm / fresh ratio     {warm / fresh:7.2f}   (goal: 0.6 or lower)")
    print(f"  cold / fresh ratio     {cold / fresh:7.2f}")
    print(f"\ncheck of {CHECK_PARSERS} parsers with the pool: {check_seconds:.1f} s wall ({check_line})")
