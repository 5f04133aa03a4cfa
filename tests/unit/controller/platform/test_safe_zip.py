"""Bounded extraction of hostile zips: every archive here is built in the test (the bombs with a
streaming writer, never stored), and every refusal must leave nothing on disk, be one line,
and say 413-worthy (``too_big``) or 422-worthy. Memory is measured too: the 1 GiB member must
be refused without the process ever holding more than a few chunks of it."""

from __future__ import annotations

import io
import stat
import struct
import tracemalloc
import unicodedata
import zipfile
from pathlib import Path

import pytest

from controller.platform.safe_zip import Budget, ZipLimits, ZipRefused, extract

LIMITS = ZipLimits()
MiB = 1024 * 1024


def make_zip(members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return buffer.getvalue()


def zeros_zip(name: str, size: int) -> bytes:
    """A zip of one member of ``size`` zero bytes, written by streaming (never ``size`` bytes in memory)."""
    buffer = io.BytesIO()
    chunk = bytes(MiB)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open(name, "w") as member:
        for _ in range(size // MiB):
            member.write(chunk)
    return buffer.getvalue()


def special_member(name: str, mode: int, data: bytes = b"") -> bytes:
    info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
    info.create_system = 3
    info.external_attr = mode << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ok.py", "x = 1\n")
        archive.writestr(info, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def gib_of_zeros() -> bytes:
    return zeros_zip("zeros.bin", 1024 * MiB)


def refused(data: bytes, tmp_path: Path, limits: ZipLimits = LIMITS, **kw: object) -> ZipRefused:
    """Extract expecting a refusal; check that nothing at all was left in ``tmp_path``."""
    dest = tmp_path / "out"
    with pytest.raises(ZipRefused) as caught:
        extract(data, dest, limits, **kw)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == [], "a refused archive left files behind"
    line = caught.value.one_line()
    assert "\n" not in line and len(line) < 400
    return caught.value


class TestSoundArchives:
    def test_files_and_folders_are_extracted_under_dest(self, tmp_path: Path):
        """A submission folder comes out as it went in; the listing names the files."""
        data = make_zip({"alice/": b"", "alice/requirements.txt": b"pandas\n",
                         "alice/custom_parsers/icici_parser.py": b"def parse(p):\n    return None\n"})
        files = extract(data, tmp_path / "out", LIMITS)
        assert files == ["alice/requirements.txt", "alice/custom_parsers/icici_parser.py"]
        assert (tmp_path / "out" / "alice" / "custom_parsers" / "icici_parser.py").read_bytes().startswith(b"def")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]

    def test_stored_members_and_utf8_names(self, tmp_path: Path):
        """Stored (uncompressed) members and non-ASCII UTF-8 names are fine."""
        files = extract(make_zip({"café_parser.py": b"x = 1\n"}, compression=zipfile.ZIP_STORED),
                        tmp_path / "out", LIMITS)
        assert files == ["café_parser.py"]


class TestBombs:
    def test_a_gib_of_zeros_is_refused_by_the_bytes_it_inflates_to(self, gib_of_zeros: bytes, tmp_path: Path):
        """The header is not trusted: the count of bytes actually inflated stops it, in bounded memory."""
        tracemalloc.start()
        try:
            error = refused(gib_of_zeros, tmp_path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert error.too_big and "inflates to more than 8388608 bytes" in error.one_line()
        assert peak < 16 * MiB, f"peak {peak / MiB:.1f} MiB while refusing a 1 GiB member"

    def test_the_compression_ratio_is_bounded(self, tmp_path: Path):
        """A member within the size caps that inflates 1000:1 is refused once past 1 MiB."""
        error = refused(zeros_zip("z.bin", 4 * MiB), tmp_path)
        assert error.too_big and "times its compressed size" in error.one_line()

    def test_a_header_that_lies_small_is_caught(self, tmp_path: Path):
        """A member whose header claims fewer bytes than its data: zipfile's CRC check refuses it."""
        data = bytearray(make_zip({"a.py": b"x = 1\n" * 1000}))
        at = data.index(b"PK\x01\x02")
        struct.pack_into("<L", data, at + 24, 10)  # the central directory's uncompressed size
        error = refused(bytes(data), tmp_path)
        assert not error.too_big

    def test_the_total_is_shared_between_members_and_archives(self, tmp_path: Path):
        """Many members under the per-member cap still stop at the total, and a budget spans archives."""
        small = ZipLimits(member_bytes=MiB, total_bytes=3 * MiB // 2, ratio=10_000)
        data = make_zip({f"m{i}.bin": bytes(MiB - 10) for i in range(3)})
        assert refused(data, tmp_path, small).too_big
        budget = Budget(small.total_bytes, small.members)
        extract(make_zip({"a.bin": bytes(MiB - 10)}), tmp_path / "one", small, budget=budget)
        with pytest.raises(ZipRefused, match="in all"):
            extract(make_zip({"b.bin": bytes(MiB - 10)}), tmp_path / "two", small, budget=budget)
        assert not (tmp_path / "two").exists()

    def test_the_member_count_is_shared_between_archives(self, tmp_path: Path):
        """Many archives each under the member cap cannot make more files than one may."""
        limits = ZipLimits(members=10)
        budget = Budget(limits.total_bytes, limits.members)
        extract(make_zip({f"a{i}.py": b"" for i in range(6)}), tmp_path / "one", limits, budget=budget)
        with pytest.raises(ZipRefused, match="more than 10 members with the other zips"):
            extract(make_zip({f"b{i}.py": b"" for i in range(6)}), tmp_path / "two", limits, budget=budget)
        assert not (tmp_path / "two").exists()

    def test_a_42_zip_style_nested_archive_is_refused(self, tmp_path: Path):
        """An archive inside the archive is never opened: refused by name, and by content under another name."""
        inner = zeros_zip("zeros.bin", 16 * MiB)
        outer = make_zip({f"lib{i}.zip": inner for i in range(16)})
        assert "itself an archive" in refused(outer, tmp_path).one_line()
        disguised = make_zip({"data.txt": inner})
        assert "itself an archive" in refused(disguised, tmp_path).one_line()

    def test_ten_thousand_members_are_refused_before_listing(self, tmp_path: Path):
        """The end record's count is checked before zipfile builds 10,000 objects."""
        data = make_zip({f"f{i}.py": b"" for i in range(10_000)})
        error = refused(data, tmp_path)
        assert error.too_big and "more than 2000 members" in error.one_line()

    def test_an_end_record_that_understates_the_count_is_still_bounded(self, tmp_path: Path):
        """A forged count in the end record does not let more members through."""
        data = bytearray(make_zip({f"f{i}.py": b"" for i in range(2500)}))
        at = data.rindex(b"PK\x05\x06")
        struct.pack_into("<HH", data, at + 8, 10, 10)
        assert "more than 2000 members" in refused(bytes(data), tmp_path).one_line()


class TestNames:
    @pytest.mark.parametrize("name", [
        "../evil.py", "a/../../evil.py", "/etc/cron.d/evil", "C:/evil.py", "a\\..\\evil.py", "a/./b.py",
        "a//b.py", "bell\x07.py", "rtl\u202egnp.py",
    ])
    def test_unsafe_names_are_refused(self, tmp_path: Path, name: str):
        """Absolute paths, '..', '.', empty parts, backslashes, drives and control characters."""
        assert not refused(make_zip({"ok.py": b"", name: b"x"}), tmp_path).too_big

    def test_too_deep_is_refused(self, tmp_path: Path):
        deep = "/".join(["d"] * 17) + ".py"
        assert "path parts deep" in refused(make_zip({deep: b""}), tmp_path).one_line()

    @pytest.mark.filterwarnings("ignore:Duplicate name")
    @pytest.mark.parametrize("names", [
        ["a.py", "a.py"], ["A.py", "a.py"], ["Dir/x.py", "dir/y.py"], ["a", "a/b.py"], ["a/b.py", "a"],
        [unicodedata.normalize("NFC", "é.py"), unicodedata.normalize("NFD", "é.py")],
    ])
    def test_colliding_names_are_refused(self, tmp_path: Path, names: list[str]):
        """Duplicates, names equal but for case or Unicode form, and a file that is also a folder."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name in names:
                archive.writestr(name, b"x")
        assert "collides" in refused(buffer.getvalue(), tmp_path).one_line()

    def test_a_name_that_is_not_utf8_is_refused(self, tmp_path: Path):
        """A name without the UTF-8 flag is read as cp437 by zipfile: anything but ASCII is refused."""
        data = make_zip({"cafX.py": b"x = 1\n"}).replace(b"cafX", b"caf\x82")
        assert "not UTF-8" in refused(data, tmp_path).one_line()

    @pytest.mark.parametrize("mode", [stat.S_IFLNK | 0o777, stat.S_IFCHR | 0o644, stat.S_IFIFO | 0o644])
    def test_symlinks_and_devices_are_refused(self, tmp_path: Path, mode: int):
        error = refused(special_member("link.py", mode, b"/etc/passwd"), tmp_path)
        assert "only files and folders" in error.one_line()


class TestDamage:
    @pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
    def test_a_truncated_zip_is_refused(self, tmp_path: Path, cut: float):
        data = make_zip({"a.py": b"x = 1\n" * 5000, "b.py": b"y = 2\n" * 5000})
        assert not refused(data[: int(len(data) * cut)], tmp_path).too_big

    @pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x05\x06" + b"\0" * 10, bytes(range(256)) * 50])
    def test_garbage_is_refused(self, tmp_path: Path, data: bytes):
        assert not refused(data, tmp_path).too_big

    def test_damaged_member_data_is_refused_and_nothing_half_written_stays(self, tmp_path: Path):
        """The first member extracts, the second is corrupt: the whole archive goes, the first too."""
        good = b"x = 1\n" * 1000
        data = bytearray(make_zip({"a.py": good, "b.py": bytes(range(256)) * 400}))
        second = data.index(b"PK\x03\x04", 10)
        for i in range(second + 60, second + 400):
            data[i] ^= 0x5A
        refused(bytes(data), tmp_path)

    def test_zip64_is_refused(self, tmp_path: Path):
        """An end record that defers to a zip64 one (counts of 0xFFFF) is refused before zipfile reads it."""
        data = bytearray(make_zip({"a.py": b"x = 1\n"}))
        struct.pack_into("<HH", data, data.rindex(b"PK\x05\x06") + 8, 0xFFFF, 0xFFFF)
        assert "zip64" in refused(bytes(data), tmp_path).one_line()
