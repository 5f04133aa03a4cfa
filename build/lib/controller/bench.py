"""``make bench``: what the sandbox costs, measured against a plain local process.

Times the same entrypoint and the same parser (the offline coder's first candidate for the
target) two ways, several repetitions each: through the Docker sandbox (end to end as the
controller sees it: create, copy in, run, collect, remove) and as a local subprocess of the
controller's Python. Prints medians and the ratio; asserts nothing.

The local runs execute that parser on the host without isolation. They are a yardstick
for this benchmark only, and use the offline coder's deterministic output, never code from
an LLM; nothing else in the platform runs generated code outside a sandbox.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents.bank_parser.analysis import analyze
from agents.bank_parser.coders import make_coder
from agents.bank_parser.evaluate import IMAGE_NAME, execute_parser, judge, parser_spec
from controller.progress import Progress
from controller.services import Services
from controller.settings import Settings
from controller.targets import Target, resolve_target


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    """Run the benchmark and print its figures."""
    target = resolve_target(args.target, settings.data_dir)
    repeat = max(1, int(args.repeat))
    progress = Progress()
    code = make_coder(settings).generate(analyze(target.pdf, target.expected_csv)).code
    services = Services.start(settings, progress.say)
    try:
        image = services.image(IMAGE_NAME)
        progress.say(f"timing {target.name}: {repeat} sandboxed run(s), {repeat} local run(s)")
        sandboxed = _time_sandbox(services, image, code, target, settings, repeat)
    finally:
        services.close()
    local = _time_local(code, target, settings, repeat)
    _print(target.name, sandboxed, local)
    return 0


def _time_sandbox(
    services: Services, image: str, code: str, target: Target, settings: Settings, repeat: int
) -> list[float]:
    pdf = target.pdf.read_bytes()
    times = []
    for _ in range(repeat):
        spec = parser_spec(image, code, pdf, settings.sandbox, {"agent": "bench", "target": target.name})
        started = time.perf_counter()
        execution = execute_parser(services.sandbox, spec)
        times.append(time.perf_counter() - started)
        comparison = judge(execution, target.expected_csv)
        if execution.failure is not None or (comparison is not None and not comparison.passed):
            print(f"warning: the sandboxed run did not pass: {execution.message}", file=sys.stderr)
    return times


def _time_local(code: str, target: Target, settings: Settings, repeat: int) -> list[float]:
    entrypoint = settings.images_dir / IMAGE_NAME / "entrypoint.py"
    times = []
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-") as tmp:
        parser = Path(tmp) / "parser.py"
        parser.write_text(code, encoding="utf-8")
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-I", str(entrypoint), str(parser), str(target.pdf.resolve()), str(Path(tmp) / "out.json")],
                check=True, capture_output=True, cwd=tmp, timeout=300,
            )
            times.append(time.perf_counter() - started)
    return times


def _print(target: str, sandboxed: list[float], local: list[float]) -> None:
    rows = [("sandbox (docker, end to end)", sandboxed), ("local subprocess", local)]
    print(f"\nparser of {target}: wall time per execution, {len(local)} repetitions")
    print(f"  {'way':<30} {'median':>8} {'min':>8} {'max':>8}")
    for name, values in rows:
        print(f"  {name:<30} {statistics.median(values):7.3f}s {min(values):7.3f}s {max(values):7.3f}s")
    ratio = statistics.median(sandboxed) / statistics.median(local)
    print(f"  sandbox / local (medians)      {ratio:7.2f}x")
