"""The holder's end marker: found across frame boundaries, removed from the captured output."""

from __future__ import annotations

from controller.sandbox.session import StreamCapture, _MarkerScanner

MARKER = b"\x1esandloop-end 3\x1e"


def feed(chunks: list[bytes], limit: int = 1000) -> tuple[StreamCapture, int | None]:
    capture, scanner, offset, status = StreamCapture(limit), _MarkerScanner(), 0, None
    for chunk in chunks:
        capture.feed("stdout", chunk)
        found = scanner.scan(chunk, offset)
        offset += len(chunk)
        if found is not None:
            start, length, status = found
            capture.cut("stdout", start, length)
            break
    return capture, status


class TestMarker:
    def test_a_marker_in_one_chunk_is_found_and_cut(self):
        """Output then marker: the status is read, the output is kept without the marker."""
        capture, status = feed([b"hello\n" + MARKER])
        assert status == 3 and capture.stream("stdout").data == b"hello\n"
        assert capture.stream("stdout").total_bytes == 6

    def test_a_marker_split_across_chunks_is_found(self):
        """Split at every position, the marker is still found and cut exactly."""
        data = b"x" * 50 + MARKER
        for split in range(1, len(data)):
            capture, status = feed([data[:split], data[split:]])
            assert status == 3, split
            assert capture.stream("stdout").data == b"x" * 50

    def test_a_marker_past_the_kept_bytes_only_fixes_the_count(self):
        """When the kept prefix is full, the marker is subtracted from the total only."""
        capture, status = feed([b"y" * 2000 + MARKER], limit=1024)
        assert status == 3
        assert capture.stream("stdout").data == b"y" * 1024
        assert capture.stream("stdout").total_bytes == 2000

    def test_text_that_merely_resembles_it_is_not_a_marker(self):
        """No record separators, or a non-number, is ordinary output."""
        _, status = feed([b"sandloop-end 0\n", b"\x1esandloop-end x\x1e"])
        assert status is None
