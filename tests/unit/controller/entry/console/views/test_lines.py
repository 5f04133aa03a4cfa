"""A window of a long file by line numbers, read without decoding the whole file."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.entry.console.views.lines import CHUNK, count_lines, window


@pytest.fixture
def long_file(tmp_path: Path) -> Path:
    path = tmp_path / "stdout.txt"
    with path.open("w") as handle:
        for number in range(1, 100_001):
            handle.write(f"line {number}\n")
        handle.write("no newline yet")
    return path


class TestWindow:
    def test_the_last_lines_by_default(self, long_file: Path):
        """The tail is the last complete lines; an unfinished line is not one (the stream sends it later)."""
        win = window(long_file, None, 1000)
        assert (win.total, win.first, win.is_tail, win.next) == (100_000, 99_001, True, None)
        assert win.lines[0].text == "line 99001" and win.lines[-1].text == "line 100000"
        assert win.previous == 98_001

    def test_a_window_in_the_middle_across_chunks(self, long_file: Path):
        win = window(long_file, 77_777, 500)
        assert [line.number for line in win.lines] == list(range(77_777, 78_277))
        assert all(line.text == f"line {line.number}" for line in win.lines)
        assert not win.is_tail and win.next == 78_277

    def test_a_start_past_the_end_shows_the_last_line(self, long_file: Path):
        assert window(long_file, 10**9, 10).lines[0].number == 100_000

    def test_a_missing_file_is_empty(self, tmp_path: Path):
        win = window(tmp_path / "none.txt", None)
        assert (win.total, win.lines, win.is_tail) == (0, (), True)

    def test_a_line_longer_than_a_chunk_is_cut_not_lost(self, tmp_path: Path):
        path = tmp_path / "long.txt"
        path.write_bytes(b"a" * (CHUNK * 2 + 5) + b"\nshort\n")
        win = window(path, 1, 10)
        assert count_lines(path) == 2 and [len(line.text) for line in win.lines][1] == 5
        assert len(win.lines[0].text) <= 64 * 1024

    def test_progress_lines_know_their_node(self, tmp_path: Path):
        path = tmp_path / "console.txt"
        path.write_text("==> run x\n  [setup]     analyze   ok  1s\n  [attempt 2] execute   ok  1s\nPASSED\n")
        assert [line.node for line in window(path, None).lines] == ["", "analyze", "execute", ""]
