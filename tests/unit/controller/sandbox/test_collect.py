"""Streamed, capped collection: the tar reader never goes past its cap, one regular member only."""

from __future__ import annotations

import base64
import io
import json
import tarfile

import pytest

from controller.sandbox.collect import BoundedReader, Refused, _check_stat, _single_regular_member


def tar_of(*members: tuple[str, bytes | None, bytes]) -> bytes:
    """A tar of (name, content or None for a folder, type) members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
            info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if info.size else None)
    return buffer.getvalue()


def chunks(data: bytes, size: int = 1000):  # noqa: ANN201
    return iter([data[i:i + size] for i in range(0, len(data), size)])


def stat(mode: int, size: int) -> str:
    return base64.b64encode(json.dumps({"name": "result.json", "mode": mode, "size": size}).encode()).decode()


class TestBoundedReader:
    def test_reads_within_the_limit(self):
        """Everything under the limit comes back unchanged."""
        reader = BoundedReader(chunks(b"a" * 5000), limit=6000)
        assert reader.read() == b"a" * 5000

    def test_refuses_past_the_limit_without_buffering_it(self):
        """Offered more than the limit, it raises instead of accumulating the rest."""
        endless = iter(lambda: b"x" * 65536, None)
        reader = BoundedReader(endless, limit=100_000)
        with pytest.raises(Refused, match="cap"):
            while reader.read(10240):
                pass


class TestSingleRegularMember:
    def test_one_regular_file_is_returned(self):
        """The expected name as one regular file yields its bytes."""
        archive = tar_of(("result.json", b"{}", tarfile.REGTYPE))
        assert _single_regular_member(BoundedReader(chunks(archive), 10**6), "result.json", 100) == b"{}"

    @pytest.mark.parametrize(("members", "reason"), [
        ([("result.json", None, tarfile.DIRTYPE), ("result.json/a", b"x", tarfile.REGTYPE)], "regular"),
        ([("result.json", b"", tarfile.SYMTYPE)], "regular"),
        ([("result.json", b"1", tarfile.REGTYPE), ("result.json", b"2", tarfile.REGTYPE)], "more than one"),
        ([("other", b"1", tarfile.REGTYPE)], "unexpected"),
        ([], "no file"),
    ])
    def test_anything_else_is_refused_with_a_reason(self, members, reason):
        """Folders, links, second members and strangers are refused, each with a one-line reason."""
        archive = tar_of(*members)
        with pytest.raises(Refused, match=reason):
            _single_regular_member(BoundedReader(chunks(archive), 10**6), "result.json", 100)

    def test_a_member_over_the_cap_is_refused(self):
        """A member whose header claims more than the cap is refused before it is read."""
        archive = tar_of(("result.json", b"x" * 500, tarfile.REGTYPE))
        with pytest.raises(Refused, match="cap"):
            _single_regular_member(BoundedReader(chunks(archive), 10**6), "result.json", 100)

    def test_garbage_is_refused_as_malformed(self):
        """Bytes that are not a tar are refused, not raised as a tarfile error."""
        with pytest.raises(Refused, match="malformed|no file"):
            _single_regular_member(BoundedReader(chunks(b"\x00garbage" * 100), 10**6), "result.json", 100)


class TestStat:
    @pytest.mark.parametrize(("mode", "what"), [(1 << 31 | 0o755, "folder"), (1 << 27 | 0o777, "link"),
                                                 (1 << 25 | 0o644, "pipe")])
    def test_a_wrong_type_is_refused_from_the_stat_alone(self, mode, what):
        """The engine's path stat is enough to refuse a folder, a link or a pipe."""
        with pytest.raises(Refused, match=what):
            _check_stat(stat(mode, 4096), "result.json", 10**6)

    def test_a_size_over_the_cap_is_refused(self):
        """A regular file the stat says is over the cap is refused unread."""
        with pytest.raises(Refused, match="cap"):
            _check_stat(stat(0o644, 2000), "result.json", 1000)

    def test_a_missing_or_garbled_stat_is_refused(self):
        """No stat header, or one that does not decode, refuses the file."""
        for encoded in (None, "!!!"):
            with pytest.raises(Refused):
                _check_stat(encoded, "result.json", 1000)
