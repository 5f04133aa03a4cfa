"""Reading a sandbox's output files back from the holder's frames: bounded, one regular file per name.

After its end marker the holder (:mod:`controller.platform.sandbox.holder`) sends each expected
output as ``\\x1esandloop-file <name> <kind> [<n>]\\x1e``, followed for kind ``data`` by
exactly ``n`` bytes, and closes with ``\\x1esandloop-done\\x1e``. The holder is trusted, but
the bytes arrive on the same stdout the program wrote to, so a program can forge all of it:
everything here is decoded as hostile. A header is at most :data:`HEADER_MAX` bytes and must
name an expected file once; a file's bytes count against the collection cap *before* they
are accepted, so the controller never holds more than the cap whatever a header claims.
Anything malformed refuses every output with a one-line reason
(``SandboxResult.refused_files``); a program that garbles its own outputs loses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Longest header: \x1e + "sandloop-file " + a 128-byte name + " big " + 12 digits + \x1e.
HEADER_MAX = 192
_SEPARATOR = 0x1E
_HEADER = re.compile(
    rb"\x1esandloop-(?:file ([A-Za-z0-9][A-Za-z0-9._-]{0,127}) "
    rb"(data|big|link|folder|pipe|missing|other)(?: ([0-9]{1,12}))?|(done))\x1e"
)
_NOT_REGULAR = {
    "link": "is a symbolic link, not a regular file",
    "folder": "is a folder, not a regular file",
    "pipe": "is a named pipe, not a regular file",
    "other": "is not a regular file",
}
#: Why names are refused when the holder never got to them (timeout, killed, stream cut).
NOT_READ = "the sandbox ended before its outputs could be read"


@dataclass
class Collected:
    """Files read back, and the names refused with the reason for each."""

    files: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    too_big: list[str] = field(default_factory=list)

    @classmethod
    def none_read(cls, names: tuple[str, ...], reason: str = NOT_READ) -> Collected:
        """Every name refused with ``reason``."""
        return cls(refused={name: f"{name}: {reason}" for name in names})


class OutputFrames:
    """Incremental decoder of the holder's output frames for the expected ``names``."""

    def __init__(self, names: tuple[str, ...], cap: int) -> None:
        """Expect ``names`` (each at most once), ``cap`` bytes of file data in all."""
        self._names, self._left = names, cap
        self._seen: set[str] = set()
        self._header = bytearray()
        self._file: str | None = None
        self._need = 0
        self._data = bytearray()
        self._collected = Collected()
        self.complete = False
        self.error: str | None = None

    @property
    def finished(self) -> bool:
        """The closing frame arrived, or the stream was found malformed."""
        return self.complete or self.error is not None

    def feed(self, chunk: bytes) -> None:
        """Decode the next bytes of the stream (bytes after the end are ignored)."""
        pos = 0
        while pos < len(chunk) and not self.finished:
            pos = self._feed_data(chunk, pos) if self._file is not None else self._feed_header(chunk, pos)

    def result(self) -> Collected:
        """What was collected; names not reached are refused (the stream ended early or was bad)."""
        if self.error is not None:
            return Collected.none_read(self._names, f"the sandbox's output frames are malformed ({self.error})")
        collected = Collected(dict(self._collected.files), dict(self._collected.refused),
                              list(self._collected.too_big))
        if not self.complete:
            for name in self._names:
                if name not in self._seen or name == self._file:
                    collected.files.pop(name, None)
                    collected.refused[name] = f"{name}: {NOT_READ}"
        return collected

    def _feed_data(self, chunk: bytes, pos: int) -> int:
        take = min(self._need - len(self._data), len(chunk) - pos)
        self._data += chunk[pos:pos + take]
        if len(self._data) == self._need:
            self._collected.files[self._file] = bytes(self._data)  # type: ignore[index]
            self._file, self._data = None, bytearray()
        return pos + take

    def _feed_header(self, chunk: bytes, pos: int) -> int:
        if not self._header:
            if chunk[pos] != _SEPARATOR:
                return self._fail("bytes outside a frame")
            self._header.append(_SEPARATOR)
            pos += 1
        end = chunk.find(_SEPARATOR, pos)
        stop = len(chunk) if end < 0 else end + 1
        self._header += chunk[pos:stop]
        if len(self._header) > HEADER_MAX:
            return self._fail("a header is too long")
        if end >= 0:
            header, self._header = bytes(self._header), bytearray()
            self._on_header(header)
        return stop

    def _on_header(self, header: bytes) -> None:
        match = _HEADER.fullmatch(header)
        if match is None:
            self._fail("an unreadable header")
            return
        if match.group(4):
            self.complete = True
            return
        name, kind, number = match.group(1).decode(), match.group(2).decode(), match.group(3)
        if name not in self._names or name in self._seen:
            self._fail("an unexpected or repeated name")
            return
        self._seen.add(name)
        if kind == "data":
            self._start_file(name, number)
        elif kind == "big":
            self._collected.too_big.append(name)
            self._collected.refused[name] = f"{name}: {int(number or 0)} bytes, over the collection cap"
        elif kind != "missing":
            self._collected.refused[name] = f"{name}: {_NOT_REGULAR[kind]}"

    def _start_file(self, name: str, number: bytes | None) -> None:
        if number is None:
            self._fail("a file without a size")
            return
        size = int(number)
        if size > self._left:
            self._fail("a file over the collection cap")
            return
        self._left -= size
        if size == 0:
            self._collected.files[name] = b""
            return
        self._file, self._need = name, size

    def _fail(self, reason: str) -> int:
        self.error = reason
        self._file, self._data, self._header = None, bytearray(), bytearray()
        return 1 << 62
