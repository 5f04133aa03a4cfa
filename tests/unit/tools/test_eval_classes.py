"""make eval's table per class of case: classes from the corpus's names, the newest summary wins."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tools.eval_classes import case_class, main, newest_statuses, newest_summaries, ocr_lines, table


def summary(runs: Path, run_id: str, target: str, status: str, mtime: float, **extra: object) -> None:
    path = runs / run_id / "summary.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"target": target, "status": status, **extra}))
    os.utime(path, (mtime, mtime))


def test_classes_follow_the_corpus_names():
    assert [case_class(n) for n in ("icici", "nocsv-kestrel", "scan-corvid", "scan-nocsv-x", "scan-faded-y")] == [
        "text", "no result.csv", "scan", "scan", "scan"]


def test_the_newest_summary_of_a_target_counts_and_junk_is_skipped(tmp_path: Path):
    summary(tmp_path, "a1", "scan-corvid", "failed", 1000)
    summary(tmp_path, "a2", "scan-corvid", "passed", 2000)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "summary.json").write_text("[not an object")
    assert newest_statuses(tmp_path) == {"scan-corvid": "passed"}


def test_the_table_counts_passing_statuses_and_names_the_rest():
    lines = table(["icici", "nocsv-kestrel", "scan-corvid", "scan-faded-y"],
                  {"icici": "passed", "nocsv-kestrel": "self-consistent", "scan-corvid": "failed"})
    assert lines == ["per class of case:",
                     "  text             1 of 1",
                     "  no result.csv    1 of 1",
                     "  scan             0 of 2   not passed: scan-corvid (failed), scan-faded-y (did not finish)"]


def test_main_reads_the_folders(tmp_path: Path, capsys):
    (tmp_path / "data" / "icici").mkdir(parents=True)
    summary(tmp_path / "runs", "r", "icici", "passed", 1000)
    assert main([str(tmp_path / "data"), str(tmp_path / "runs")]) == 0
    assert "text             1 of 1" in capsys.readouterr().out


def test_ocr_time_per_page_over_the_scans(tmp_path: Path):
    summary(tmp_path, "a", "scan-corvid", "passed", 1000, ocr={"page_reads": 2, "ocr_seconds": 6.0})
    summary(tmp_path, "b", "scan-dunmore", "passed", 1000, ocr={"page_reads": 1, "ocr_seconds": 1.5})
    summary(tmp_path, "c", "icici", "passed", 1000, ocr={})
    summary(tmp_path, "d", "scan-odd", "failed", 1000, ocr={"page_reads": "many"})
    assert ocr_lines(newest_summaries(tmp_path)) == [
        "  scan OCR       3 page read(s) in 7.5 s: 2.5 s a page (slowest scan-corvid, 3.0 s a page)"]


def test_the_largest_peak_memory_follows(tmp_path: Path):
    summary(tmp_path, "a", "scan-corvid", "passed", 1000, ocr={"page_reads": 2, "ocr_seconds": 6.0, "peak_mib": 240.4})
    summary(tmp_path, "b", "scan-dunmore", "passed", 1000, ocr={"page_reads": 1, "ocr_seconds": 1.5, "peak_mib": 251.6})
    summary(tmp_path, "c", "scan-odd", "passed", 1000, ocr={"page_reads": 1, "ocr_seconds": 1.5, "peak_mib": "x"})
    assert ocr_lines(newest_summaries(tmp_path))[1] == (
        "  scan memory    peak 252 MiB (scan-dunmore) of the sandbox's limit")


def test_no_ocr_line_without_scans(tmp_path: Path):
    summary(tmp_path, "a", "icici", "passed", 1000)
    assert ocr_lines(newest_summaries(tmp_path)) == []
