"""``make bench`` (the service part): what the service adds to a run, measured on a real one.

A ``python -m controller serve`` process on a free loopback port, its own runs folder and
store, the project's data, no token (loopback only). Then, on the target:

* **submit -> first event**: ``POST /v1/runs`` then ``GET /v1/runs/{id}/events``, the time to
  the first Server-Sent Event (the run's status) and to its first progress line (the run's
  child has started and printed); each run is followed to its end;
* **per-run overhead**: the wall time of such a run, submit to ``end`` event, against a local
  ``python -m controller run --target`` on the same warm machine, interleaved;
* **throughput**: ``--runs`` (100) runs submitted at once, the time until the last one ended,
  against ``workers x`` the single-run rate of the local runs, and the machine's CPU-seconds
  per run meanwhile (all processes: service, runs, engine, sandboxes);
* all of it three times, in one bench: with ``SBX_SERVICE__WARM_WORKERS=false`` (each run a
  fresh ``python -m controller run``: before issue 32), with warm workers (each run forked from a
  parent that imported everything) but ``SBX_SERVICE__WARM_SANDBOXES=false`` (each run warms its
  own first sandbox), and with both (the workers hand each run a warm sandbox they keep: after),
  so each change is shown on the same machine;
* **the floor**: the machine's CPU-seconds of one sandbox container's life alone (create, start,
  wait, remove) running ``true``, then importing pandas and pdfplumber as a warm container does,
  with docker-py and no controller: what no change to the workers can save, since every
  execution gets a container of its own.

Prints medians and each goal of issue 21 (first event <= 50 ms, overhead <= 5 %, throughput
>= 0.9 x workers x single-run rate); asserts nothing (speed is not a test).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from controller.entry.service.client import parse_sse
from controller.platform.settings import PROJECT_ROOT

if TYPE_CHECKING:
    from docker import DockerClient


@dataclass(frozen=True)
class Followed:
    """One run over the service: seconds from the submit to each milestone."""

    first_event: float
    first_line: float
    end: float
    status: str


@dataclass(frozen=True)
class Mode:
    """One way of running the service's runs."""

    name: str
    title: str
    warm_workers: bool
    warm_sandboxes: bool


MODES = (
    Mode("cold", "cold workers (SBX_SERVICE__WARM_WORKERS=false: a fresh interpreter per run)", False, False),
    Mode("warm", "warm workers, each run warms its own sandbox (SBX_SERVICE__WARM_SANDBOXES=false)", True, False),
    Mode("pool", "warm workers and the workers' warm sandboxes (each run handed a warm container)", True, True),
)


@contextmanager
def service(root: Path, workers: int, mode: Mode) -> Iterator[tuple[str, dict[str, str]]]:
    """A service process on a free port over ``root``; yields its URL and the environment."""
    env = {**os.environ, "SBX_RUNS_DIR": str(root / "runs"), "SBX_PARSERS_DIR": str(root / "parsers"),
           "SBX_DATA_DIR": str(PROJECT_ROOT / "data"), "SBX_LOG_FORMAT": "json",
           "SBX_PARALLEL_RUNS": str(workers), "SBX_SERVICE__QUEUE_LIMIT": "1000",
           "SBX_SERVICE__QUOTA_PER_TOKEN": "1000", "SBX_SERVICE__WARM_WORKERS": str(mode.warm_workers).lower(),
           "SBX_SERVICE__WARM_SANDBOXES": str(mode.warm_sandboxes).lower()}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with (root / "service.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "controller", "serve", "--port", str(port)],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc)
        yield url, env
    finally:
        proc.terminate()
        proc.wait(120)


def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the service exited; see its log")
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the service did not become ready in 120 s")


def follow(http: httpx.Client, target: str) -> Followed:
    """Submit one run and follow its events to the end."""
    started = time.perf_counter()
    run = http.post("/v1/runs", json={"target": target}).json()
    first_event = first_line = float("nan")
    status = "?"
    with http.stream("GET", f"/v1/runs/{run['id']}/events", timeout=httpx.Timeout(30, read=600)) as response:
        for event, data in parse_sse(response.iter_lines()):
            now = time.perf_counter() - started
            if first_event != first_event:
                first_event = now
            if event == "line" and first_line != first_line:
                first_line = now
            if event == "end":
                status = str(data.get("status"))
                break
    return Followed(first_event, first_line, time.perf_counter() - started, status)


def local_run(env: dict[str, str], target: str) -> float:
    """Wall time of ``python -m controller run --target`` with the service's environment."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "controller", "run", "--target", target], env=env,
                   capture_output=True, timeout=600, check=False)
    return time.perf_counter() - started


def busy_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot (/proc/stat: all but idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def throughput(http: httpx.Client, target: str, runs: int) -> tuple[float, dict[str, int]]:
    """Seconds from submitting ``runs`` runs at once to the end of the last, and their statuses."""
    started = time.perf_counter()
    ids = [http.post("/v1/runs", json={"target": target}).json()["id"] for _ in range(runs)]
    statuses: dict[str, str] = {}
    while len(statuses) < len(ids):
        time.sleep(0.2)
        for run_id in ids:
            if run_id not in statuses:
                row = http.get(f"/v1/runs/{run_id}").json()
                if row["status"] not in ("queued", "running"):
                    statuses[run_id] = row["status"]
    counts: dict[str, int] = {}
    for status in statuses.values():
        counts[status] = counts.get(status, 0) + 1
    return time.perf_counter() - started, counts


@dataclass(frozen=True)
class Measured:
    """One mode's figures."""

    followed: list[Followed]
    local: list[float]
    seconds: float
    cpu: float
    counts: dict[str, int]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_service", description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="icici", metavar="NAME")
    parser.add_argument("--repeat", type=int, default=5, metavar="N", help="followed and local runs (default 5)")
    parser.add_argument("--runs", type=int, default=100, metavar="N", help="runs queued at once (default 100)")
    parser.add_argument("--workers", type=int, default=2, metavar="N", help="the service's workers (default 2)")
    args = parser.parse_args(argv)
    print(f"==> service bench on {args.target}: {args.repeat} followed runs, {args.repeat} local runs "
          f"(interleaved), then {args.runs} queued at once on {args.workers} workers; "
          f"modes: {', '.join(m.name for m in MODES)}; load average {_load()}", flush=True)
    measured = {mode: measure(args, mode) for mode in MODES}
    for mode, figures in measured.items():
        _print(args, mode.title, figures)
    _compare(measured)
    _floor()
    print(f"\nload average at the end: {_load()}")
    return 0


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def measure(args: argparse.Namespace, mode: Mode) -> Measured:
    """One service (one mode): followed runs, local runs, then the queue drained."""
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-service-") as tmp, \
            service(Path(tmp), args.workers, mode) as (url, env), httpx.Client(base_url=url, timeout=60) as http:
        # warm-up: the first run builds nothing but fills the OS caches (and shows the workers the
        # kind of its first sandbox; the next runs of the pool mode are handed warm ones)
        follow(http, args.target)
        time.sleep(2.0)  # the workers' warm containers start (and import) before the first followed run
        followed: list[Followed] = []
        local: list[float] = []
        for _ in range(args.repeat):
            followed.append(follow(http, args.target))
            local.append(local_run(env, args.target))
        cpu = busy_seconds()
        seconds, counts = throughput(http, args.target, args.runs)
        return Measured(followed, local, seconds, (busy_seconds() - cpu) / args.runs, counts)


def _print(args: argparse.Namespace, title: str, m: Measured) -> None:
    first = statistics.median(f.first_event for f in m.followed) * 1000
    line = statistics.median(f.first_line for f in m.followed)
    served = statistics.median(f.end for f in m.followed)
    alone = statistics.median(m.local)
    rate, goal = args.runs / m.seconds, 0.9 * args.workers / alone
    print(f"\nservice, {args.target}, {title} (medians of {len(m.followed)}; "
          f"statuses {sorted({f.status for f in m.followed})})")
    print(f"  submit -> first event     {first:7.1f} ms   (goal 50 ms or less)")
    print(f"  submit -> first line      {line:7.2f} s    (the run's process started and printed)")
    print(f"  run over the service      {served:7.2f} s    submit to end event")
    print(f"  the same run, local CLI   {alone:7.2f} s    service / CLI {served / alone:.2f}")
    print(f"  {args.runs} runs queued at once   {m.seconds:7.1f} s    {rate:.2f} runs/s on {args.workers} workers; "
          f"goal {goal:.2f} (0.9 x {args.workers} x 1/{alone:.2f} s)   {m.counts}")
    print(f"  CPU per queued run        {m.cpu:7.2f} s    (the whole machine's busy CPU-seconds / runs)")


def _compare(measured: dict[Mode, Measured]) -> None:
    def both(pick: Callable[[Measured], float]) -> str:
        return " -> ".join(f"{pick(m):6.2f}" for m in measured.values())

    print(f"\nbefore -> after ({' -> '.join(m.name for m in measured)})")
    print(f"  run over the service, s    {both(lambda m: statistics.median(f.end for f in m.followed))}")
    print(f"  service / CLI              "
          f"{both(lambda m: statistics.median(f.end for f in m.followed) / statistics.median(m.local))}")
    print(f"  submit -> first line, s    {both(lambda m: statistics.median(f.first_line for f in m.followed))}")
    print(f"  queued runs per second     {both(lambda m: sum(m.counts.values()) / m.seconds)}")
    print(f"  CPU-seconds per run        {both(lambda m: m.cpu)}")


def _floor(count: int = 10) -> None:
    """The busy CPU-seconds of one container's life with and without the parser image's imports."""
    import docker  # lazy: only for this part of the bench

    from controller.platform.settings import Settings  # lazy: as above

    client = docker.from_env()
    repository = f"{Settings().image_prefix}/python-parser"
    tags = [tag for image in client.images.list(repository) for tag in image.tags]
    if not tags:
        print(f"\nthe floor: no {repository} image (make images)")
        return
    print(f"\nthe floor: one container's life, {count} in a row ({tags[0]}; docker-py, no controller)")
    for label, command in (("running true", ["true"]),
                           ("importing pandas and pdfplumber", ["python3", "-I", "-c", "import pandas, pdfplumber"])):
        _container(client, tags[0], command)  # the first fills the OS caches
        cpu, started = busy_seconds(), time.perf_counter()
        for _ in range(count):
            _container(client, tags[0], command)
        print(f"  {label:32s} {(busy_seconds() - cpu) / count:5.2f} CPU-s, "
              f"{(time.perf_counter() - started) / count:5.2f} s each")


def _container(client: DockerClient, image: str, command: list[str]) -> None:
    """Create, start, wait for and remove one container, limited as a sandbox is."""
    made = client.containers.create(image, command, network_mode="none", user="65534:65534",
                                    read_only=True, mem_limit="512m", nano_cpus=10**9, pids_limit=128, cap_drop=["ALL"])
    try:
        made.start()
        made.wait(timeout=60)
    finally:
        made.remove(force=True)


if __name__ == "__main__":
    sys.exit(main())
