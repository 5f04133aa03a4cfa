"""The collector's frame: decoded only when complete, every record checked, sizes bounded."""

from __future__ import annotations

import hashlib
import json

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.kubernetes.frame import FrameError, decode_frame
from tests.unit.controller.platform.sandbox.kubernetes.cluster import real_frame

SPEC = SandboxSpec(image="x", command=("x",), collect=("result.json",), limits=SandboxLimits(output_bytes=1024))


def _frame(*records: dict) -> bytes:
    lines = [json.dumps(r).encode() + b"\n" for r in ({"t": "begin", "frame": "sandloop.k8s/1"}, *records)]
    digest = hashlib.sha256(b"".join(lines)).hexdigest()
    return b"".join(lines) + json.dumps({"t": "end", "count": len(lines), "sha256": digest}).encode() + b"\n"


class TestDecodeFrame:
    def test_the_real_programs_frame_round_trips(self) -> None:
        """Status, both streams and the file written by a program come back as written."""
        frame = decode_frame(real_frame("import sys; sys.stderr.write('e'); "
                                        "open('OUT/result.json','wb').write(b'\\x00\\xff')"), SPEC)
        assert frame.exit_code == 0 and frame.files == {"result.json": b"\x00\xff"}
        assert frame.streams["stderr"].data == b"e"

    def test_a_signal_death_reads_like_a_shell_exit_code(self) -> None:
        """A program killed by SIGKILL reports 137, as Docker does."""
        assert decode_frame(real_frame("import os; os.kill(os.getpid(), 9)"), SPEC).exit_code == 137

    @pytest.mark.parametrize("cut", [2, 10, 100])
    def test_a_cut_frame_is_refused(self, cut: int) -> None:
        """Any truncation beyond the final newline fails the end record."""
        with pytest.raises(FrameError):
            decode_frame(real_frame("print('hello')")[:-cut], SPEC)

    def test_an_altered_line_is_refused(self) -> None:
        """A changed byte fails the digest."""
        log = real_frame("pass").replace(b'"exit_code":0', b'"exit_code":1')
        with pytest.raises(FrameError, match="incomplete or altered"):
            decode_frame(log, SPEC)

    def test_a_file_not_asked_for_is_refused(self) -> None:
        """Only names in spec.collect may come back."""
        with pytest.raises(FrameError, match="bad file record"):
            decode_frame(_frame({"t": "file", "name": "../etc/passwd", "total": 1, "size": 1},
                                {"t": "d", "b": "eA=="}), SPEC)

    def test_a_stream_over_the_output_cap_is_refused(self) -> None:
        """A stream announcing more than output_bytes is refused before any data is read."""
        with pytest.raises(FrameError):
            decode_frame(_frame({"t": "stream", "name": "stdout", "total": 5000, "size": 5000}), SPEC)

    def test_more_data_than_announced_is_refused(self) -> None:
        """Data beyond a record's size is an error, not silently kept."""
        with pytest.raises(FrameError, match="more data"):
            decode_frame(_frame({"t": "file", "name": "result.json", "total": 1, "size": 1},
                                {"t": "d", "b": "eHg="}), SPEC)

    def test_status_values_of_the_wrong_type_are_dropped(self) -> None:
        """A status with strings where numbers belong yields no exit code and no flags."""
        frame = decode_frame(_frame({"t": "status", "exit_code": "0", "timed_out": "yes", "oom_kills": "1"}), SPEC)
        assert (frame.exit_code, frame.timed_out, frame.oom_killed) == (None, False, False)
