"""Extract an uploaded zip that may be hostile, within bounds checked before and while extracting.

Before anything is inflated, the archive's end record is read by this module (not trusted to
:mod:`zipfile`): a zip64 archive, or a central directory larger than ``members`` entries can
take, is refused, so that listing the members costs bounded memory. Then every member's name
and kind is checked (no absolute path, no ``..``, no backslash, drive, control character or
empty part; not deeper than ``depth``; no symlink, device or FIFO; not encrypted; stored or
deflated only; no duplicate, no two names equal but for case or Unicode normalisation, no
file that is also a folder). Then the files are inflated by streaming, counting the bytes
actually produced, never the sizes the headers claim: past ``member_bytes`` for one member,
``total_bytes`` for all (shared by the archives of one request, as ``members`` is), or ``ratio``
times a member's compressed size, extraction stops.
An archive inside the archive is refused (a 42.zip-style bomb is never opened further).

Everything is written into a fresh folder beside ``dest`` and renamed to ``dest`` only when
the whole archive passed: a refusal leaves nothing behind. Each refusal is a
:class:`ZipRefused` with one line; ``too_big`` says whether it is a size (413) or a bad
archive (422).
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import stat
import struct
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from agents.ports.errors import UsageError

_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
#: A central directory entry's fixed part; each also holds its name (≤ MAX_NAME_BYTES) and a
#: little extra data, so the directory of ``members`` entries fits in this many bytes each.
_CD_ENTRY_BYTES = 46 + 1024 + 256
MAX_NAME_BYTES = 1024
MAX_PART_BYTES = 255
CHUNK = 64 * 1024
#: Below this many inflated bytes a member is not held to the ratio (tiny files compress well).
RATIO_FLOOR = 1024 * 1024
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
#: The start of an archive a member must not be (we never open archives inside the archive).
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf")
_ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".rar", ".whl", ".jar", ".egg")


@dataclass(frozen=True)
class ZipLimits:
    """Bounds on one archive (``total_bytes`` may be shared by several, see :class:`Budget`)."""

    members: int = 2000
    member_bytes: int = 8 * 1024 * 1024
    total_bytes: int = 64 * 1024 * 1024
    ratio: int = 100
    depth: int = 16


class ZipRefused(UsageError):
    """The archive was refused; ``too_big`` for a size bound (413), else a bad archive (422)."""

    def __init__(self, message: str, *, too_big: bool = False, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.too_big = too_big


@dataclass
class Budget:
    """Inflated bytes and members left for a request (several archives share one total of each)."""

    left: int
    members: int


def extract(data: bytes | BinaryIO, dest: Path, limits: ZipLimits, *, label: str = "the zip",
            budget: Budget | None = None) -> list[str]:
    """Extract the archive ``data`` into ``dest`` (which must not exist); the files' relative paths.

    Raises:
        ZipRefused: the archive broke a bound or is not a sound zip; nothing was written.
    """
    fp: BinaryIO = io.BytesIO(data) if isinstance(data, bytes) else data
    budget = budget if budget is not None else Budget(limits.total_bytes, limits.members)
    _check_end_record(fp, limits, label)
    try:
        archive = zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, UnicodeDecodeError, ValueError, OSError, EOFError) as exc:
        raise ZipRefused(f"{label} is not a readable zip archive ({type(exc).__name__})") from None
    with archive:
        infos = archive.infolist()
        budget.members -= len(infos)
        if len(infos) > limits.members or budget.members < 0:
            raise ZipRefused(f"{label} has more than {limits.members} members"
                             + ("" if len(infos) > limits.members else " with the other zips"), too_big=True,
                             hint="raise SBX_SERVICE__ZIP_MEMBERS to accept more")
        members = check_members(infos, limits, label)
        staging = dest.parent / f".{dest.name}.partial-{secrets.token_hex(4)}"
        try:
            staging.mkdir(parents=True)
            written = [_write_member(archive, info, parts, staging, limits, budget, label)
                       for info, parts in members]
            os.rename(staging, dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return [name for name in written if name]


def _check_end_record(fp: BinaryIO, limits: ZipLimits, label: str) -> None:
    """Refuse zip64 and a central directory larger than ``limits.members`` entries need, before
    :mod:`zipfile` reads it (it would build an object per entry however many there are)."""
    fp.seek(0, os.SEEK_END)
    size = fp.tell()
    tail_start = max(0, size - (_EOCD.size + 0xFFFF))
    fp.seek(tail_start)
    tail = fp.read()
    # zipfile looks at the last 22 bytes first, then for the last signature in the tail: the same here.
    last = tail[-_EOCD.size:]
    at = len(tail) - _EOCD.size if last[:4] == _EOCD_SIGNATURE and last[-2:] == b"\0\0" \
        else tail.rfind(_EOCD_SIGNATURE)
    if at < 0 or len(tail) - at < _EOCD.size:
        raise ZipRefused(f"{label} is not a zip archive (no end of central directory)")
    _, disk, cd_disk, _, entries, cd_size, cd_offset, _ = _EOCD.unpack(tail[at:at + _EOCD.size])
    if (at >= 20 and tail[at - 20:at - 16] == _ZIP64_LOCATOR) or 0xFFFF in (disk, cd_disk, entries) \
            or 0xFFFFFFFF in (cd_size, cd_offset):
        raise ZipRefused(f"{label} is a zip64 archive, which is not accepted",
                         hint="a submission is far smaller than zip64's sizes; zip it without zip64")
    if disk or cd_disk:
        raise ZipRefused(f"{label} is a multi-disk archive, which is not accepted")
    if entries > limits.members or cd_size > limits.members * _CD_ENTRY_BYTES:
        raise ZipRefused(f"{label} has more than {limits.members} members", too_big=True,
                         hint="raise SBX_SERVICE__ZIP_MEMBERS to accept more")
    fp.seek(0)


def check_members(infos: list[zipfile.ZipInfo], limits: ZipLimits,
                  label: str = "the zip") -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """Each member with its checked path parts, in archive order.

    Raises:
        ZipRefused: a name, kind or method that is refused, or a collision.
    """
    folders: dict[str, str] = {}  # folded path -> its spelling
    files: set[str] = set()
    checked = []
    for info in infos:
        parts = member_parts(info, limits, label)
        is_dir = info.is_dir()
        _check_kind(info, is_dir, label)
        paths = ["/".join(parts[:depth]) for depth in range(1, len(parts) + (1 if is_dir else 0))]
        clash = any(fold(p) in files or folders.setdefault(fold(p), p) != p for p in paths)
        if not is_dir:
            whole = fold("/".join(parts))
            clash = clash or whole in files or whole in folders
            files.add(whole)
        if clash:
            raise ZipRefused(f"{label}: {_shown(info.filename)} collides with another member "
                             "(the same name, or equal but for case or Unicode form)")
        checked.append((info, parts))
    return checked


def member_parts(info: zipfile.ZipInfo, limits: ZipLimits, label: str) -> tuple[str, ...]:
    """The member's path parts, refused unless it is a plain relative path within ``limits.depth``."""
    name = info.filename
    shown = _shown(name)
    if not info.flag_bits & 0x800 and not name.isascii():
        raise ZipRefused(f"{label}: the member name {shown} is not UTF-8 (its zip flag says another encoding)",
                         hint="zip it with a tool that writes UTF-8 names, or use ASCII names")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ZipRefused(f"{label}: a member name is longer than {MAX_NAME_BYTES} bytes")
    if "\\" in name or any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in name):
        raise ZipRefused(f"{label}: the member name {shown} holds a backslash or a control character")
    path = PurePosixPath(name)
    raw_parts = name.rstrip("/").split("/")
    if name.startswith("/") or path.is_absolute() or (raw_parts and ":" in raw_parts[0]):
        raise ZipRefused(f"{label}: the member {shown} has an absolute path")
    if any(part in ("", ".", "..") for part in raw_parts):
        raise ZipRefused(f"{label}: the member {shown} has an empty, '.' or '..' part")
    if any(len(part.encode("utf-8")) > MAX_PART_BYTES for part in raw_parts):
        raise ZipRefused(f"{label}: a part of {shown} is longer than {MAX_PART_BYTES} bytes")
    if len(raw_parts) > limits.depth:
        raise ZipRefused(f"{label}: the member {shown} is more than {limits.depth} path parts deep",
                         hint="raise SBX_SERVICE__ZIP_DEPTH to accept deeper trees")
    return tuple(raw_parts)


def _check_kind(info: zipfile.ZipInfo, is_dir: bool, label: str) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.create_system == 3 and kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = "a symlink" if kind == stat.S_IFLNK else "a device, FIFO or socket"
        raise ZipRefused(f"{label}: the member {_shown(info.filename)} is {what}; only files and folders are accepted")
    if info.flag_bits & 0x1:
        raise ZipRefused(f"{label}: the member {_shown(info.filename)} is encrypted")
    if not is_dir and info.compress_type not in _METHODS:
        raise ZipRefused(f"{label}: the member {_shown(info.filename)} uses compression method "
                         f"{info.compress_type}; only stored and deflated are accepted")
    if not is_dir and info.filename.lower().endswith(_ARCHIVE_SUFFIXES):
        raise _nested(info, label)


def _nested(info: zipfile.ZipInfo, label: str) -> ZipRefused:
    return ZipRefused(f"{label}: the member {_shown(info.filename)} is itself an archive; archives inside "
                      "the archive are not accepted", hint="zip the submission's files themselves")


def fold(path: str) -> str:
    """The form two names that would collide on a case-insensitive or normalising file system share."""
    return unicodedata.normalize("NFC", path).casefold()


def _write_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, parts: tuple[str, ...], root: Path,
                  limits: ZipLimits, budget: Budget, label: str) -> str:
    target = root.joinpath(*parts)
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return ""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        try:
            with archive.open(info) as member:
                _copy_bounded(member, out, info, limits, budget, label)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as exc:
            raise ZipRefused(f"{label}: the member {_shown(info.filename)} cannot be read "
                             f"({type(exc).__name__}: the archive is damaged or truncated)") from None
    return "/".join(parts)


def _copy_bounded(member: IO[bytes], out: BinaryIO, info: zipfile.ZipInfo, limits: ZipLimits, budget: Budget,
                  label: str) -> None:
    """Copy by chunks, counting what inflates, not what the header claims."""
    written = 0
    shown = _shown(info.filename)
    while chunk := member.read(CHUNK):
        if written == 0 and chunk.startswith(_ARCHIVE_MAGIC):
            raise _nested(info, label)
        written += len(chunk)
        budget.left -= len(chunk)
        if written > limits.member_bytes:
            raise ZipRefused(f"{label}: the member {shown} inflates to more than {limits.member_bytes} bytes",
                             too_big=True, hint="raise SBX_SERVICE__ZIP_MEMBER_BYTES to accept larger files")
        if budget.left < 0:
            raise ZipRefused(f"{label}: the archive inflates to more than {limits.total_bytes} bytes in all",
                             too_big=True, hint="raise SBX_SERVICE__ZIP_TOTAL_BYTES to accept more")
        if written > RATIO_FLOOR and written > limits.ratio * max(info.compress_size, 1):
            raise ZipRefused(f"{label}: the member {shown} inflates to more than {limits.ratio} times its "
                             "compressed size (a zip bomb?)", too_big=True,
                             hint="raise SBX_SERVICE__ZIP_RATIO to accept it")
        out.write(chunk)


def _shown(name: str) -> str:
    """A member name fit for a one-line message: bounded, control characters escaped."""
    return ascii(name[:120])
