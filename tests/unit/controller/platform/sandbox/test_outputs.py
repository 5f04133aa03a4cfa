"""The holder's output frames: decoded with bounded memory, strictly, whatever the bytes are."""

from __future__ import annotations

import pytest

from controller.platform.sandbox.outputs import HEADER_MAX, OutputFrames

NAMES = ("result.json", "extra.txt")


def frame(name: str, kind: str, number: int | None = None) -> bytes:
    tail = f" {number}" if number is not None else ""
    return f"\x1esandloop-file {name} {kind}{tail}\x1e".encode()


DONE = b"\x1esandloop-done\x1e"


def decode(stream: bytes, cap: int = 1000, split: int | None = None) -> OutputFrames:
    frames = OutputFrames(NAMES, cap)
    step = split or len(stream) or 1
    for start in range(0, len(stream), step):
        frames.feed(stream[start:start + step])
    return frames


class TestWellFormed:
    def test_files_come_back_exactly_at_every_split(self):
        """Data frames (including bytes that look like markers) decode the same however they arrive."""
        body = b'{"a": "\x1esandloop-done\x1e"}'
        stream = frame("result.json", "data", len(body)) + body + frame("extra.txt", "data", 0) + DONE
        for split in range(1, len(stream) + 1):
            frames = decode(stream, split=split)
            assert frames.complete, split
            assert frames.result().files == {"result.json": body, "extra.txt": b""}

    def test_missing_names_are_neither_files_nor_refusals(self):
        """A name the program did not write is simply absent."""
        result = decode(frame("result.json", "missing") + DONE).result()
        assert result.files == {} and result.refused == {}

    @pytest.mark.parametrize(("kind", "words"), [("link", "symbolic link"), ("folder", "folder"),
                                                  ("pipe", "named pipe"), ("other", "not a regular file")])
    def test_what_is_not_a_regular_file_is_refused_by_its_kind(self, kind, words):
        """The holder names the kind; the controller refuses with that reason."""
        result = decode(frame("result.json", kind) + DONE).result()
        assert result.files == {} and words in result.refused["result.json"]

    def test_a_file_over_the_cap_is_announced_not_sent(self):
        """'big' is refused as too big (truncated), without a byte of it."""
        result = decode(frame("result.json", "big", 5000) + DONE).result()
        assert result.too_big == ["result.json"] and "cap" in result.refused["result.json"]


class TestHostile:
    def test_a_claimed_size_over_the_cap_is_refused_before_any_byte_is_kept(self):
        """A forged header asking for more than the cap fails the stream; nothing is buffered."""
        frames = decode(frame("result.json", "data", 10**12) + b"x" * 5000, cap=1000)
        assert frames.error and frames.result().files == {}
        assert set(frames.result().refused) == set(NAMES)

    def test_the_cap_covers_all_files_together(self):
        """Two files of 600 bytes against a cap of 1000: the second fails the stream."""
        stream = frame("result.json", "data", 600) + b"a" * 600 + frame("extra.txt", "data", 600) + b"b" * 600
        assert decode(stream, cap=1000).error

    @pytest.mark.parametrize("stream", [
        b"junk before any frame",
        frame("other.txt", "data", 1) + b"x",
        frame("result.json", "missing") + frame("result.json", "missing"),
        b"\x1esandloop-file result.json data\x1e",
        b"\x1esandloop-file ../etc/passwd data 1\x1ex",
        b"\x1esandloop-file result.json exotic\x1e",
        b"\x1e" + b"a" * (2 * HEADER_MAX),
    ])
    def test_malformed_streams_refuse_every_output(self, stream):
        """Unknown names, repeats, bad kinds, bytes between frames, endless headers: all refused."""
        frames = decode(stream)
        assert frames.error is not None
        result = frames.result()
        assert result.files == {} and set(result.refused) == set(NAMES)
        assert all("malformed" in reason for reason in result.refused.values())

    def test_an_endless_header_is_cut_at_its_bound(self):
        """Bytes of a header that never closes are not accumulated past HEADER_MAX."""
        frames = OutputFrames(NAMES, 1000)
        frames.feed(b"\x1esandloop-file " + b"a" * 10)
        for _ in range(1000):
            frames.feed(b"a" * 1000)
        assert frames.error is not None and len(frames._header) == 0

    def test_a_stream_cut_short_refuses_what_did_not_arrive(self):
        """Half a file, then the end of the stream: that file and the rest are not read."""
        stream = frame("extra.txt", "data", 2) + b"ok" + frame("result.json", "data", 100) + b"x" * 10
        result = decode(stream).result()
        assert result.files == {"extra.txt": b"ok"}
        assert "before its outputs could be read" in result.refused["result.json"]

    def test_bytes_after_the_closing_frame_are_ignored(self):
        """Once done, nothing more is decoded or kept."""
        frames = decode(frame("result.json", "missing") + DONE + b"x" * 10_000)
        assert frames.complete and frames.error is None and frames.result().files == {}


class TestFuzzedStreams:
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.decoders import HOLDER_INPUTS

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(HOLDER_INPUTS)
    def test_any_stdout_keeps_the_bounds(self, case):
        """Any stdout, in any chunking: no exception, capture and frames bounded, only asked-for names."""
        from tests.fuzz.decoders import check_holder_stdout

        check_holder_stdout(case)
