"""Reading a sandbox's output files back: streamed, capped, one regular file per name.

What a sandbox leaves under ``/work/out`` is hostile. Each expected name is fetched with
one archive request and read as a *stream*: the engine's path stat (sent before the body)
refuses folders, links, devices and oversized files without reading a byte of them; the tar
body is read in stream mode through a reader that stops at the cap, so the controller never
holds more than the cap in memory whatever the archive claims; the archive must hold exactly
one member, the name itself, as a regular file. Anything else refuses that file with a
one-line reason, kept in the result (``SandboxResult.refused_files``).
"""

from __future__ import annotations

import base64
import json
import tarfile
from dataclasses import dataclass, field
from typing import Any

import docker.errors

#: Tar framing around one member: its header, padding, and the two end-of-archive blocks.
_TAR_SLACK = 8 * 512 + 10240
# Go's os.FileMode type bits, as the engine reports them in the path stat.
_TYPE_BITS = {
    1 << 31: "a folder",
    1 << 27: "a symbolic link",
    1 << 26: "a device",
    1 << 25: "a named pipe",
    1 << 24: "a socket",
    1 << 21: "a character device",
    1 << 19: "not a regular file",
}


class Refused(Exception):
    """The named output is not one regular file within the cap; the message says why."""


@dataclass
class Collected:
    """Files read back, and the names refused with the reason for each."""

    files: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    too_big: list[str] = field(default_factory=list)


class BoundedReader:
    """A read-only file object over an iterator of chunks that refuses to go past ``limit`` bytes."""

    def __init__(self, chunks: Any, limit: int) -> None:
        self._chunks, self._limit = chunks, limit
        self._buffer, self.consumed = b"", 0

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes; raises :class:`Refused` once more than the limit was offered."""
        want = self._limit + 1 if size is None or size < 0 else size
        while len(self._buffer) < want:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._buffer += chunk
            if self.consumed + len(self._buffer) > self._limit:
                raise Refused(f"its archive is larger than the {self._limit}-byte cap")
        data, self._buffer = self._buffer[:want], self._buffer[want:]
        self.consumed += len(data)
        return data


def collect(api: Any, container_id: str, directory: str, names: tuple[str, ...], cap: int) -> Collected:
    """Read each of ``names`` from ``directory`` in the (running) container, ``cap`` bytes in all."""
    result, budget = Collected(), cap
    for name in names:
        try:
            data = _one(api, container_id, f"{directory}/{name}", name, budget)
        except _Missing:
            continue
        except _TooBig as exc:
            result.too_big.append(name)
            result.refused[name] = str(exc)
            continue
        except Refused as exc:
            result.refused[name] = f"{name}: {exc}"
            continue
        result.files[name] = data
        budget -= len(data)
    return result


class _Missing(Exception):
    pass


class _TooBig(Refused):
    pass


def _one(api: Any, container_id: str, path: str, name: str, cap: int) -> bytes:
    response = api._get(api._url("/containers/{0}/archive", container_id), params={"path": path}, stream=True)
    try:
        if response.status_code == 404:
            raise _Missing
        api._raise_for_status(response)
        _check_stat(response.headers.get("x-docker-container-path-stat"), name, cap)
        reader = BoundedReader(response.iter_content(64 * 1024, False), cap + _TAR_SLACK)
        return _single_regular_member(reader, name, cap)
    except docker.errors.NotFound as exc:
        raise _Missing from exc
    finally:
        response.close()


def _check_stat(encoded: str | None, name: str, cap: int) -> None:
    """Refuse on the engine's path stat alone: wrong type or too big, before reading the body."""
    if not encoded:
        raise Refused("the engine sent no file information")
    try:
        stat = json.loads(base64.b64decode(encoded))
        mode, size = int(stat.get("mode", 0)), int(stat.get("size", 0))
    except (ValueError, TypeError, AttributeError) as exc:
        raise Refused("the engine's file information is unreadable") from exc
    for bit, what in _TYPE_BITS.items():
        if mode & bit:
            raise Refused(f"is {what}, not a regular file")
    if size > cap:
        raise _TooBig(f"{name}: {size} bytes, over the {cap}-byte collection cap")


def _single_regular_member(reader: BoundedReader, name: str, cap: int) -> bytes:
    data: bytes | None = None
    try:
        with tarfile.open(fileobj=reader, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                if member.name != name:
                    raise Refused(f"unexpected archive member {member.name[:80]!r}")
                if data is not None:
                    raise Refused("more than one archive member of that name")
                if not member.isreg():
                    raise Refused("is not a regular file")
                if member.size > cap:
                    raise _TooBig(f"{name}: {member.size} bytes, over the {cap}-byte collection cap")
                extracted = tar.extractfile(member)
                data = extracted.read() if extracted is not None else b""
    except tarfile.TarError as exc:
        raise Refused(f"its archive is malformed ({type(exc).__name__})") from exc
    if data is None:
        raise Refused("the archive held no file")
    return data
