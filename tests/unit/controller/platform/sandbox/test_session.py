"""The container's stdout: the program's output, the holder's markers and the frames that follow, apart."""

from __future__ import annotations

from controller.platform.sandbox.outputs import OutputFrames
from controller.platform.sandbox.session import READY_MARKER, HolderStdout, StreamCapture

MARKER = b"\x1esandloop-end 3\x1e"
FRAMES = b"\x1esandloop-file result.json data 2\x1e{}\x1esandloop-done\x1e"


def feed(chunks: list[bytes], limit: int = 1000) -> tuple[StreamCapture, HolderStdout]:
    capture = StreamCapture(limit)
    stdout = HolderStdout(capture, OutputFrames(("result.json",), 1000))
    for chunk in chunks:
        stdout.feed(chunk)
    return capture, stdout


class TestEndMarker:
    def test_a_marker_in_one_chunk_is_found_and_cut(self):
        """Output then marker: the status is read, the output is kept without the marker."""
        capture, stdout = feed([b"hello\n" + MARKER])
        assert stdout.status == 3 and capture.stream("stdout").data == b"hello\n"
        assert capture.stream("stdout").total_bytes == 6

    def test_marker_and_frames_split_anywhere_are_found_and_kept_apart(self):
        """Split at every position: the output, the status and the collected file are the same."""
        data = b"x" * 50 + MARKER + FRAMES
        for split in range(1, len(data)):
            capture, stdout = feed([data[:split], data[split:]])
            assert stdout.status == 3, split
            assert capture.stream("stdout").data == b"x" * 50, split
            assert stdout.frames.complete and stdout.frames.result().files == {"result.json": b"{}"}, split

    def test_the_marker_says_whether_a_fork_failed_at_the_process_limit(self):
        """``sandloop-end <status> <forks refused>``: any refused fork sets pids_limited; none, or an
        older marker without the count, does not."""
        assert feed([b"\x1esandloop-end 0 3\x1e"])[1].pids_limited
        _, stdout = feed([b"\x1esandloop-end 1 0\x1e"])
        assert stdout.status == 1 and not stdout.pids_limited
        assert not feed([MARKER])[1].pids_limited

    def test_a_marker_past_the_kept_bytes_only_leaves_the_count(self):
        """When the kept prefix is full, the output is counted but the marker and frames are not."""
        capture, stdout = feed([b"y" * 2000 + MARKER + FRAMES], limit=1024)
        assert stdout.status == 3
        assert capture.stream("stdout").data == b"y" * 1024
        assert capture.stream("stdout").total_bytes == 2000

    def test_text_that_merely_resembles_it_is_not_a_marker(self):
        """No record separators, or a non-number, is ordinary output, kept whole at the stream's end."""
        capture, stdout = feed([b"sandloop-end 0\n", b"\x1esandloop-end x\x1e"])
        stdout.flush()
        assert stdout.status is None
        assert capture.stream("stdout").data == b"sandloop-end 0\n\x1esandloop-end x\x1e"

    def test_a_separator_at_the_end_of_output_is_kept_when_the_stream_ends(self):
        """Bytes held back in case they start a marker are output after all."""
        capture, stdout = feed([b"abc\x1e"])
        assert capture.stream("stdout").data == b"abc"
        stdout.flush()
        assert capture.stream("stdout").data == b"abc\x1e"


class TestReadyMarker:
    def test_the_ready_marker_is_noted_and_cut(self):
        """A warm command's ready marker, even split, sets ready and is not output."""
        data = b"warming\n" + READY_MARKER + b"program output\n" + MARKER
        for split in range(1, len(data)):
            capture, stdout = feed([data[:split], data[split:]])
            assert stdout.ready and stdout.status == 3, split
            assert capture.stream("stdout").data == b"warming\nprogram output\n", split
