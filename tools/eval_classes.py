"""``make eval``'s last table: the corpus's results per class of case.

    python -m tools.eval_classes DATA_DIR RUNS_DIR

A target's class comes from its name, as ``tests/corpus`` writes them: ``scan-…`` a scanned
statement (``scan-nocsv-…``, ``scan-faded-…``, ``scan-headerless-…`` among them), ``nocsv-…``
a text PDF whose ``result.csv`` is withheld, anything else a text PDF with its CSV. A target's
result is the status in the newest ``summary.json`` of its runs; a target with none did not
finish (counted as not passed). Passing statuses are the CLI's: passed, unverified and
self-consistent. The scans' OCR time per page follows, summed over the OCR cost each scan's
newest summary reports (issue 24), and the largest peak memory a scan's parser reported
(issue 35). Reads only JSON the runs wrote; prints, asserts nothing.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

PASSING = frozenset({"passed", "unverified", "self-consistent"})
CLASSES = ("text", "no result.csv", "scan")
MAX_SUMMARY_BYTES = 1024 * 1024


def case_class(target: str) -> str:
    """The class of a corpus target, from its name."""
    if target.startswith("scan-"):
        return "scan"
    return "no result.csv" if target.startswith("nocsv-") else "text"


def newest_summaries(runs_dir: Path) -> dict[str, dict[str, object]]:
    """Each target's newest readable summary.json (a JSON object naming its target and status)."""
    found: dict[str, tuple[float, dict[str, object]]] = {}
    for path in runs_dir.glob("*/summary.json"):
        try:
            if path.stat().st_size > MAX_SUMMARY_BYTES:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            target, when = str(data["target"]), path.stat().st_mtime
            data["status"] = str(data["status"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if target not in found or when > found[target][0]:
            found[target] = (when, data)
    return {target: data for target, (_, data) in found.items()}


def newest_statuses(runs_dir: Path) -> dict[str, str]:
    """Each target's status in its newest readable summary.json."""
    return statuses_of(newest_summaries(runs_dir))


def statuses_of(summaries: dict[str, dict[str, object]]) -> dict[str, str]:
    """Each target's status in its summary."""
    return {target: str(data["status"]) for target, data in summaries.items()}


def ocr_lines(summaries: dict[str, dict[str, object]]) -> list[str]:
    """The scans' OCR cost: page reads, seconds, seconds a page, and the slowest scan."""
    costs = {}
    for target, data in summaries.items():
        ocr = data.get("ocr")
        if isinstance(ocr, dict) and _number(ocr.get("page_reads")) > 0:
            costs[target] = (_number(ocr.get("page_reads")), _number(ocr.get("ocr_seconds")))
    if not costs:
        return []
    reads = sum(r for r, _ in costs.values())
    seconds = sum(s for _, s in costs.values())
    per_page = {target: s / r for target, (r, s) in costs.items()}
    slowest = max(per_page, key=per_page.__getitem__)
    return [f"  scan OCR       {int(reads)} page read(s) in {seconds:.1f} s: {seconds / reads:.1f} s a page "
            f"(slowest {slowest}, {per_page[slowest]:.1f} s a page)"] + peak_lines(summaries)


def peak_lines(summaries: dict[str, dict[str, object]]) -> list[str]:
    """The scans' largest peak memory, as their parsers measured it (issue 35), if any said."""
    peaks: dict[str, float] = {}
    for target, data in summaries.items():
        ocr = data.get("ocr")
        if isinstance(ocr, dict) and _number(ocr.get("peak_mib")) > 0:
            peaks[target] = _number(ocr.get("peak_mib"))
    if not peaks:
        return []
    highest = max(peaks, key=peaks.__getitem__)
    return [f"  scan memory    peak {peaks[highest]:.0f} MiB ({highest}) of the sandbox's limit"]


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def table(targets: list[str], statuses: dict[str, str]) -> list[str]:
    """One line per class: passed of all, and the targets that did not pass."""
    passed: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    missed: dict[str, list[str]] = defaultdict(list)
    for target in sorted(targets):
        kind = case_class(target)
        total[kind] += 1
        status = statuses.get(target, "did not finish")
        if status in PASSING:
            passed[kind] += 1
        else:
            missed[kind].append(f"{target} ({status})")
    lines = ["per class of case:"]
    for kind in CLASSES:
        if total[kind]:
            rest = f"   not passed: {', '.join(missed[kind])}" if missed[kind] else ""
            lines.append(f"  {kind:<14} {passed[kind]:>3} of {total[kind]}{rest}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tools.eval_classes DATA_DIR RUNS_DIR", file=sys.stderr)
        return 2
    data_dir, runs_dir = Path(argv[0]), Path(argv[1])
    targets = [p.name for p in data_dir.iterdir() if p.is_dir()] if data_dir.is_dir() else []
    summaries = newest_summaries(runs_dir)
    print("\n".join(table(targets, statuses_of(summaries)) + ocr_lines(summaries)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
