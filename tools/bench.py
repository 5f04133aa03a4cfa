"""``make bench``: what isolation costs, where the time goes, and the goals of issue #12.

From one run, for the target's parser (the offline coder's first candidate), at least ten
rounds of, interleaved: the parser called in this process, a fresh local Python process
running the sandbox's entrypoint, a cold sandbox and a warm sandbox (both end to end as the
controller sees them: hand over, run, collect; removal runs in the background), each
started once the pool's refill and the removals of the one before have finished. Then:

* the per-phase breakdown of the warm executions (take, hand over, run, collect, remove,
  and the background refill and removal) with the engine round trips on the critical path;
* ``check`` of 100 distinct submission-style parsers (the offline coder's candidates for
  the target and for every bank of the synthetic corpus, ``tests/corpus``), two at a time,
  against the sum of their in-process parse times divided by the two jobs;
* a warm ``run`` of the target (image built, offline coder), wall time;
* the cost of gVisor (issue 45), when the engine lists ``runsc`` (``make gvisor``): cold and
  warm executions of the parser under runc and under runsc, interleaved as above, and the
  ``check`` of the 100 parsers again under runsc; the runsc/runc ratios.

Prints medians, p95, the ratios and each goal; asserts nothing (speed is not a test).

The in-process and local-process figures execute those parsers on the host without
isolation. They are yardsticks for this benchmark only and use the offline coder's
deterministic output, never code from an LLM or anyone's submission; nothing else in the
platform runs generated code outside a sandbox.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.evaluate import IMAGE_NAME, execute_parser, parser_spec
from agents.bank_parser.target import Target, resolve_target
from agents.ports.errors import PlatformError, UsageError
from agents.ports.sandbox import SandboxSpec
from controller.platform.progress import Progress
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.engine import engine_runtimes
from controller.platform.sandbox.labels import this_owner
from controller.platform.settings import Settings, load_settings
from controller.runner.services import DockerServices, open_session

GVISOR = "runsc"
RUNTIMES = ("runc", GVISOR)
CHECK_PARSERS = 100
CHECK_JOBS = 2
PHASES = ("take", "hand over", "run", "collect", "remove")
WAYS = ("in-process parse()", "fresh local process", "cold sandbox", "warm sandbox")


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    """Run every measurement and print the figures."""
    target = resolve_target(args.target, settings.data_dir)
    repeat = max(10, int(args.repeat))
    progress = Progress()
    analysis = analyze_trusted(target.pdf, target.expected_csv)
    code = OfflineCoder().candidates(analysis)[0].code
    with open_session(settings, progress.say) as services:
        if not isinstance(services, DockerServices):
            raise UsageError("make bench times containers on a Docker engine", hint="unset SBX_SANDBOX_BACKEND")
        image = services.image(IMAGE_NAME)
        figures, breakdown = _four_ways(services, image, code, target, settings, repeat, progress)
    _print(target.name, figures, breakdown)  # now: the slower parts below must not hide these
    parsers = _submission_parsers(target, CHECK_PARSERS, progress)
    check = _check_many(parsers, target, settings, progress)
    run_seconds = _warm_run(target, settings, progress)
    _print_goals(figures, check, run_seconds)
    _gvisor_cost(settings, target, code, parsers, check, repeat, progress)
    return 0


def _gvisor_cost(settings: Settings, target: Target, code: str, parsers: list[str], check: dict[str, object],
                 repeat: int, progress: Progress) -> None:
    """runsc against runc, side by side: cold and warm executions, then the check of the parsers."""
    with open_session(settings, progress.say) as services:
        assert isinstance(services, DockerServices)
        if GVISOR not in engine_runtimes(services.client):
            print(f"\ngVisor: not measured (the engine does not list {GVISOR}: sudo make gvisor)")
            return
        image = services.image(IMAGE_NAME)
        figures = _by_runtime(services, image, code, target, settings, repeat, progress)
    gvisor_check = _check_many(parsers, target, settings, progress, runtime=GVISOR)
    default = check if settings.sandbox_runtime == "runc" else None
    print(f"\ngVisor ({GVISOR}) against runc, {target.name} parser, {repeat} interleaved repetitions")
    print(f"  {'execution':<18} {'runc':>8} {GVISOR:>8} {'ratio':>6}")
    for way in ("cold", "warm"):
        runc, runsc = (statistics.median(figures[f"{way} {runtime}"]) for runtime in RUNTIMES)
        print(f"  {way + ' sandbox':<18} {runc:7.3f}s {runsc:7.3f}s {runsc / runc:6.2f}")
    if default is not None:
        runc_s, runsc_s = float(default["seconds"]), float(gvisor_check["seconds"])  # type: ignore[arg-type]
        print(f"  {'check of ' + str(check['count']):<18} {runc_s:7.1f}s {runsc_s:7.1f}s {runsc_s / runc_s:6.2f}   "
              f"[{gvisor_check['line']}]")


def _by_runtime(services: DockerServices, image: str, code: str, target: Target, settings: Settings,
                repeat: int, progress: Progress) -> dict[str, list[float]]:
    """Cold and warm executions under runc and runsc, interleaved (one of each per round)."""
    progress.say(f"cold and warm sandboxes under runc and {GVISOR}, interleaved, x{repeat}")
    spec = parser_spec(image, code, target.pdf.read_bytes(), settings.sandbox, {"agent": "bench"})
    backends = {f"{way} {runtime}": DockerSandbox(services.client, user=settings.sandbox_user, owner=this_owner(),
                                                  pool_size=int(way == "warm"), pool_max_idle_seconds=600,
                                                  remove_in_background=True, runtime=runtime)
                for way in ("cold", "warm") for runtime in RUNTIMES}
    figures: dict[str, list[float]] = {name: [] for name in backends}
    try:
        for name, backend in backends.items():
            if name.startswith("warm"):
                backend.prewarm(spec)
        for _ in range(repeat):
            for name, backend in backends.items():
                for other in backends.values():
                    other.wait_warm(60)
                    other.drain_removals()
                figures[name].append(_seconds(lambda backend=backend: _sandboxed(backend, spec)))  # type: ignore[misc]
    finally:
        for backend in backends.values():
            backend.close()
    return figures


def _four_ways(
    services: DockerServices, image: str, code: str, target: Target, settings: Settings, repeat: int,
    progress: Progress,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """The four ways, interleaved (one of each per round), each started on a quiet machine.

    Interleaving makes the ratios fair on a machine whose speed drifts (a VM's neighbours,
    CPU frequency): each round measures all four under the same conditions. Before each
    measurement the warm pool's refill is let finish and removals drained, so no way pays
    for another's background work; the warm execution still pays for its own refill, which
    starts at its take (that is what a sequence of executions costs).
    """
    progress.say(f"in-process, fresh process, cold and warm sandbox, interleaved, x{repeat}")
    spec = parser_spec(image, code, target.pdf.read_bytes(), settings.sandbox, {"agent": "bench"})
    cold, warm = (DockerSandbox(services.client, user=settings.sandbox_user, owner=this_owner(), pool_size=size,
                                pool_max_idle_seconds=600, remove_in_background=True) for size in (0, 1))
    figures: dict[str, list[float]] = {name: [] for name in WAYS}
    phases: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-") as tmp:
        module = _load(code, Path(tmp), "bench_parser")
        fresh = _local_argv(code, target, settings, Path(tmp))
        ways: dict[str, Callable[[], None]] = {
            "in-process parse()": lambda: module.parse(str(target.pdf)),  # type: ignore[attr-defined]
            "fresh local process": lambda: subprocess.run(fresh, check=True, capture_output=True, cwd=tmp, timeout=300),
            "cold sandbox": lambda: _sandboxed(cold, spec),
            "warm sandbox": lambda: _sandboxed(warm, spec),
        }
        try:
            warm.prewarm(spec)
            for _ in range(repeat):
                for name, once in ways.items():
                    _settle(warm, cold)
                    figures[name].append(_seconds(once))
                    if name == "warm sandbox":
                        _add_phases(phases, warm)
            warm.drain_removals()
            phases["removal (background)"] = warm.removal_seconds
        finally:
            cold.close()
            warm.close()
    return figures, phases


def _seconds(once: Callable[[], None]) -> float:
    started = time.perf_counter()
    once()
    return time.perf_counter() - started


def _settle(warm: DockerSandbox, cold: DockerSandbox) -> None:
    """Untimed: the pool's container ready (imports done), every removal finished."""
    warm.wait_warm(60)
    warm.drain_removals()
    cold.drain_removals()


def _load(code: str, folder: Path, name: str) -> object:
    path = folder / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _local_argv(code: str, target: Target, settings: Settings, folder: Path) -> list[str]:
    """A fresh host process running the sandbox's entrypoint on the parser (no isolation: a yardstick)."""
    entrypoint = settings.images_dir / IMAGE_NAME / "entrypoint.py"
    parser = folder / "parser.py"
    parser.write_text(code, encoding="utf-8")
    return [sys.executable, "-I", str(entrypoint), str(parser), str(target.pdf.resolve()), str(folder / "out.json")]


def _sandboxed(backend: DockerSandbox, spec: SandboxSpec) -> None:
    execution = execute_parser(backend, spec)
    if execution.failure is not None:
        print(f"warning: sandboxed run failed: {execution.message}", file=sys.stderr)


def _add_phases(phases: dict[str, list[float]], backend: DockerSandbox) -> None:
    trace = backend.last_trace
    if trace is None:
        return
    for name, seconds in trace.phases.items():
        label = {"refill": "refill (background)", "ready": "ready (background)"}.get(name, name)
        phases.setdefault(label, []).append(seconds)
    phases.setdefault("round trips", []).append(float(len(trace.round_trips)))


def analyze_trusted(pdf: Path, csv: Path | None) -> Analysis:
    """The analysis of the project's own sample or corpus PDFs, read in this process: the
    bench times the sandbox, not the analysis (runs read every PDF in a sandbox)."""
    from tests.doubles.inprocess_statement import analyze_here  # lazy: a test double, for trusted files only

    return analyze_here(pdf, csv)


def _submission_parsers(target: Target, count: int, progress: Progress) -> list[str]:
    """``count`` distinct parsers: the offline coder's candidates for the target and each corpus bank."""
    from tests.corpus.generate import generate  # lazy: the test corpus generator, for this case only

    progress.say(f"writing {count} distinct parsers (offline coder, target + synthetic corpus banks)")
    pools = [[c.code for c in OfflineCoder().candidates(analyze_trusted(target.pdf, target.expected_csv))]]
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-corpus-") as tmp:
        for generated in generate(Path(tmp)):
            bank = resolve_target(generated.spec.name, Path(tmp))
            pools.append([c.code for c in OfflineCoder().candidates(analyze_trusted(bank.pdf, bank.expected_csv))])
    chosen: list[str] = []
    for rank in range(max(len(pool) for pool in pools)):
        for pool in pools:
            if rank < len(pool) and pool[rank] not in chosen:
                chosen.append(pool[rank])
            if len(chosen) == count:
                return chosen
    return chosen


def _check_many(parsers: list[str], target: Target, settings: Settings, progress: Progress,
                runtime: str | None = None) -> dict[str, object]:
    """In-process parse time of each parser (summed), then ``check`` of all of them in sandboxes
    (under ``runtime``, else the settings' runtime)."""
    progress.say(f"in-process parse() of {len(parsers)} parsers, once each")
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-check-") as tmp:
        folder = Path(tmp) / "parsers"
        folder.mkdir()
        in_process = 0.0
        for index, code in enumerate(parsers):
            (folder / f"parser_{index:03d}.py").write_text(code, encoding="utf-8")
            in_process += _parse_once(code, Path(tmp), index, target)
        progress.say(f"check of {len(parsers)} parsers, --jobs {CHECK_JOBS}, pool on, "
                     f"runtime {runtime or settings.sandbox_runtime}")
        env = {**os.environ, "SBX_DATA_DIR": str(settings.data_dir.resolve()), "SBX_LOG_FORMAT": "json",
               "SBX_RUNS_DIR": str(Path(tmp) / "runs"), "SBX_SANDBOX_RUNTIME": runtime or settings.sandbox_runtime}
        started, busy = time.perf_counter(), _busy_cpu_seconds()
        proc = subprocess.run(
            [sys.executable, "-m", "controller", "check", "--target", target.name, "--parser", str(folder),
             "--jobs", str(CHECK_JOBS)],
            capture_output=True, text=True, env=env, timeout=3600, check=False,
        )
        seconds, busy = time.perf_counter() - started, _busy_cpu_seconds() - busy
    lines = proc.stdout.strip().splitlines()
    return {"count": len(parsers), "seconds": seconds, "in_process": in_process, "cpu": busy,
            "line": lines[-1] if lines else f"exit {proc.returncode}"}


def _busy_cpu_seconds() -> float:
    """CPU time the whole machine spent busy so far (Linux ``/proc/stat``; NaN elsewhere).

    What ``check`` costs in CPU, engine and kernel included, tells where its wall time goes
    on a machine whose cores are all busy.
    """
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
    except (OSError, ValueError):
        return float("nan")
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _parse_once(code: str, folder: Path, index: int, target: Target) -> float:
    """Seconds to import the parser and call parse() once; a parser that raises counts until it raised."""
    started = time.perf_counter()
    try:
        module = _load(code, folder, f"bench_submission_{index:03d}")
        module.parse(str(target.pdf))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a failing submission is timed too
        pass
    return time.perf_counter() - started


def _warm_run(target: Target, settings: Settings, progress: Progress) -> tuple[float, float]:
    """Wall time of ``python -m controller run --target`` with the image built, and of the run
    itself as its summary.json says (its run folder discarded)."""
    progress.say(f"warm run --target {target.name}")
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-run-") as tmp:
        env = {**os.environ, "SBX_DATA_DIR": str(settings.data_dir.resolve()), "SBX_LOG_FORMAT": "json",
               "SBX_RUNS_DIR": str(Path(tmp) / "runs"), "SBX_PARSERS_DIR": str(Path(tmp) / "parsers")}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "controller", "run", "--target", target.name],
                       capture_output=True, env=env, timeout=600, check=False)
        seconds = time.perf_counter() - started
        return seconds, _run_wall(Path(tmp) / "runs")


def _run_wall(runs: Path) -> float:
    """The run's own wall time from its summary.json (NaN if it wrote none)."""
    for summary in runs.glob("*/summary.json"):
        try:
            return float(json.loads(summary.read_text(encoding="utf-8"))["wall_seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            break
    return float("nan")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _print(target: str, figures: dict[str, list[float]], breakdown: dict[str, list[float]]) -> None:
    repeat = len(next(iter(figures.values())))
    print(f"\n{target} parser, wall time per execution, {repeat} repetitions "
          f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})")
    print(f"  {'way':<22} {'median':>8} {'p95':>8}")
    for name, values in figures.items():
        print(f"  {name:<22} {statistics.median(values):7.3f}s {_p95(values):7.3f}s")
    print("\none warm execution, by phase (median of the repetitions)")
    for name in (*PHASES, "refill (background)", "ready (background)", "removal (background)"):
        if breakdown.get(name):
            print(f"  {name:<22} {statistics.median(breakdown[name]):7.3f}s")
    if breakdown.get("round trips"):
        print(f"  {'engine round trips':<22} {statistics.median(breakdown['round trips']):7.0f}   (critical path)")


def _print_goals(figures: dict[str, list[float]], check: dict[str, object],
                 run_seconds: tuple[float, float]) -> None:
    fresh = statistics.median(figures["fresh local process"])
    warm = statistics.median(figures["warm sandbox"])
    cold = statistics.median(figures["cold sandbox"])
    inproc = statistics.median(figures["in-process parse()"])
    floor = float(check["in_process"]) / CHECK_JOBS  # type: ignore[arg-type]
    seconds = float(check["seconds"])  # type: ignore[arg-type]
    print("\ngoals (issue #12)")
    print(f"  warm / fresh process     {warm / fresh:6.2f}   (goal 0.6 or lower)")
    print(f"  warm / in-process        {warm / inproc:6.2f}   (goal 1.2 or lower)")
    print(f"  cold / fresh process     {cold / fresh:6.2f}")
    print(f"  check of {check['count']} parsers     {seconds:6.1f} s wall, {seconds / floor:4.2f} x the in-process "
          f"sum / {CHECK_JOBS} jobs ({floor:.1f} s)   (goal 1.3 or lower)   [{check['line']}]")
    cpu = float(check["cpu"])  # type: ignore[arg-type]
    print(f"    CPU for the check: {cpu:.1f} CPU-s in all, {cpu / int(check['count']):.2f} per parser "  # type: ignore[call-overload]
          f"(their in-process parses: {float(check['in_process']) / int(check['count']):.2f} s each)")  # type: ignore[arg-type, call-overload]
    print(f"  warm run --target        {run_seconds[0]:6.2f} s wall, the whole process; the run itself "
          f"{run_seconds[1]:.2f} s   (goal 2 s or lower)")


def main(argv: list[str] | None = None) -> int:
    """``make bench``: parse the options, run every measurement; a platform error is one line, exit 2/3."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="icici", metavar="NAME", help="target to benchmark (default icici)")
    parser.add_argument("--repeat", type=int, default=10, metavar="N",
                        help="repetitions of each way (default and minimum 10)")
    args = parser.parse_args(argv)
    try:
        return run_bench(args, load_settings())
    except PlatformError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
