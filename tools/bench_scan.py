"""``make bench``'s scan part (issue 35): a scan's parser's peak memory and time per page.

A 3-page statement of a borderless bank is scanned as a scanner would (``tests/corpus``:
200 dpi, grey, JPEG, every page turned 0.7°); the offline coder's parser for it runs
``--repeat`` times in cold sandboxes of the python-parser image with the default limits.
Each run's ``sandloop-ocr`` line gives the peak memory (the container's memory cgroup,
page cache included, as the limit counts it; and the parser process's own) and the OCR
seconds; the wall time is the sandbox's. Prints medians and the largest peak; asserts
nothing (speed is not a test). The scan is read (and OCR'd) as a run reads it: by the
statement probe in a sandbox of the same image (``StatementReader``), so the host needs no
Tesseract.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from agents.bank_parser.analysis import analyze
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.evaluate import IMAGE_NAME, execute_parser, parser_spec
from agents.bank_parser.repairs import OcrCost, read_ocr_cost
from agents.bank_parser.statement_reader import StatementReader
from agents.ports.errors import PlatformError, UsageError
from agents.ports.sandbox import SandboxSpec
from controller.platform.progress import Progress
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.labels import this_owner
from controller.platform.settings import Settings, load_settings
from controller.runner.services import DockerServices, open_session

BANK, ROWS, SEED = "brightwater", 100, 7  # three pages


def run_bench(repeat: int, settings: Settings) -> int:
    """Scan, write the parser, run it ``repeat`` times in sandboxes, print the figures."""
    progress = Progress()
    runs: list[tuple[OcrCost, float]] = []
    with open_session(settings, progress.say) as services:
        if not isinstance(services, DockerServices):
            raise UsageError("make bench runs scans on a Docker engine", hint="unset SBX_SANDBOX_BACKEND")
        spec = _scan_parser_spec(services, settings, progress)
        backend = DockerSandbox(services.client, user=settings.sandbox_user, owner=this_owner())
        try:
            for index in range(repeat):
                progress.say(f"scan parser in a sandbox, run {index + 1} of {repeat}")
                runs.append(_once(backend, spec))
        finally:
            backend.close()
    _print(runs, settings.sandbox.memory_mb)
    return 0


def _scan_parser_spec(services: DockerServices, settings: Settings, progress: Progress) -> SandboxSpec:
    """The scan, read in a sandbox as a run reads it, and the offline coder's parser for it."""
    from tests.corpus.cases import (  # lazy: the test corpus generator, for this bench only
        SKEW,
        write_scanned,
    )

    image = services.image(IMAGE_NAME)
    reader = StatementReader(services.backend, image, settings.sandbox, settings.analysis,
                             {"agent": "bench", "attempt": "analysis"})
    with tempfile.TemporaryDirectory(prefix="sandloop-bench-scan-") as tmp:
        folder = write_scanned(Path(tmp), BANK, ROWS, SEED, angle=SKEW)
        progress.say(f"reading the scan of {BANK} ({ROWS} rows) in a sandbox, as a run does")
        code = OfflineCoder().candidates(analyze(folder / "statement.pdf", folder / "result.csv", reader))[0].code
        pdf = (folder / "statement.pdf").read_bytes()
    return parser_spec(image, code, pdf, settings.sandbox, {"agent": "bench"})


def _once(backend: DockerSandbox, spec: SandboxSpec) -> tuple[OcrCost, float]:
    execution = execute_parser(backend, spec)
    cost = read_ocr_cost(execution.sandbox.stderr.data)
    if execution.failure is not None or cost is None:
        raise UsageError(f"the scan's parser failed in the sandbox: {execution.message}",
                         hint="make images, then make bench again")
    return cost, execution.sandbox.wall_seconds


def _print(runs: list[tuple[OcrCost, float]], limit_mib: int) -> None:
    pages = runs[0][0].pages
    peak = [cost.peak_mib for cost, _ in runs]
    print(f"\nscan parser ({BANK}, {pages} pages, 200 dpi, turned 0.7°), {len(runs)} run(s), limit {limit_mib} MiB")
    print(f"  peak memory (cgroup)     median {statistics.median(peak):6.0f} MiB, largest {max(peak):.0f} MiB "
          f"({max(peak) / limit_mib:.0%} of the limit)")
    print(f"  peak memory (parser)     median {statistics.median(c.rss_mib for c, _ in runs):6.0f} MiB")
    print(f"  OCR per page             median {statistics.median(c.seconds_per_page for c, _ in runs):6.2f} s")
    print(f"  sandbox run per page     median {statistics.median(w / pages for _, w in runs):6.2f} s")


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run; a platform error is one line, exit 2/3."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_scan", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="sandboxed runs (default 3)")
    args = parser.parse_args(argv)
    try:
        return run_bench(max(1, args.repeat), load_settings())
    except PlatformError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
