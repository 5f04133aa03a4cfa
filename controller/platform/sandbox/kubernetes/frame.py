"""Decode the collector's log frame (``sandloop.k8s/1``) into status, streams and files.

The frame comes from the trusted collector container, but what it carries (status fields,
stream bytes, file bytes) was produced next to hostile code, so every value is checked
here: JSON lines only, known record kinds, sizes and names bounded by the spec, base64
that decodes, and a closing record whose count and SHA-256 cover every line before it,
so a log cut short (rotation, ``limitBytes``) is an error, never a partial result.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from agents.ports.errors import SandboxError
from agents.ports.sandbox import CapturedStream, SandboxSpec

FRAME = "sandloop.k8s/1"


class FrameError(SandboxError):
    """The collector's log is not a complete, well-formed frame."""


@dataclass
class Frame:
    """What one execution left, as the collector framed it (bounded, checked)."""

    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    wall_seconds: float = 0.0
    error: str | None = None
    streams: dict[str, CapturedStream] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    truncated_files: list[str] = field(default_factory=list)


def decode_frame(log: bytes, spec: SandboxSpec) -> Frame:
    """Decode and check the collector's log for ``spec``.

    Raises:
        FrameError: incomplete, malformed or over-size frame.
    """
    lines = log.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise FrameError("the sandbox collector wrote no output frame")
    _check_end(lines)
    frame, current = Frame(), None
    limits = {"stream": spec.limits.output_bytes, "file": spec.limits.collect_bytes}
    for line in lines[:-1]:
        record = _record(line)
        kind = record.get("t")
        if kind == "d":
            current = _append(current, record)
        else:
            _close(frame, current)
            current = _open(frame, kind, record, spec, limits)
    _close(frame, current)
    return frame


def _check_end(lines: list[bytes]) -> None:
    try:
        end = _record(lines[-1])
    except FrameError:
        end = {}  # a last line cut in the middle
    digest = hashlib.sha256()
    for line in lines[:-1]:
        digest.update(line + b"\n")
    if end.get("t") != "end" or end.get("count") != len(lines) - 1 or end.get("sha256") != digest.hexdigest():
        raise FrameError("the sandbox output frame is incomplete or altered (no matching end record)")
    if _record(lines[0]) != {"t": "begin", "frame": FRAME}:
        raise FrameError(f"the sandbox output frame is not {FRAME}")


def _record(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError("the sandbox output frame has a line that is not JSON") from exc
    if not isinstance(value, dict):
        raise FrameError("the sandbox output frame has a record that is not an object")
    return value


def _open(frame: Frame, kind: object, record: dict[str, Any], spec: SandboxSpec,
          limits: dict[str, int]) -> dict[str, Any] | None:
    if kind == "begin":
        return None
    if kind == "status":
        _status(frame, record)
        return None
    if kind not in ("stream", "file"):
        raise FrameError(f"unknown record in the sandbox output frame: {str(kind)[:20]!r}")
    name, total, size = record.get("name"), record.get("total"), record.get("size")
    allowed = ("stdout", "stderr") if kind == "stream" else spec.collect
    if name not in allowed or not isinstance(size, int) or not _count(total) or not _count(size) \
            or size > limits[kind]:
        raise FrameError(f"bad {kind} record in the sandbox output frame")
    return {"kind": kind, "name": name, "total": total, "size": size, "data": bytearray()}


def _append(current: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any]:
    if current is None:
        raise FrameError("data outside a stream or file in the sandbox output frame")
    try:
        chunk = base64.b64decode(str(record.get("b", "")), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise FrameError("bad base64 in the sandbox output frame") from exc
    current["data"] += chunk
    if len(current["data"]) > current["size"]:
        raise FrameError("more data than announced in the sandbox output frame")
    return current


def _close(frame: Frame, current: dict[str, Any] | None) -> None:
    if current is None:
        return
    data = bytes(current["data"])
    if len(data) != current["size"]:
        raise FrameError("less data than announced in the sandbox output frame")
    if current["kind"] == "stream":
        frame.streams[current["name"]] = CapturedStream(data, max(current["total"], len(data)))
        return
    frame.files[current["name"]] = data
    if current["total"] > len(data):
        frame.truncated_files.append(current["name"])


def _status(frame: Frame, record: dict[str, Any]) -> None:
    code = record.get("exit_code")
    frame.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
    if frame.exit_code is not None and frame.exit_code < 0:  # killed by a signal: as a shell says it
        frame.exit_code = 128 - frame.exit_code
    frame.timed_out = record.get("timed_out") is True
    kills = record.get("oom_kills")
    frame.oom_killed = isinstance(kills, int) and kills > 0
    wall = record.get("wall_seconds")
    frame.wall_seconds = float(wall) if isinstance(wall, (int, float)) and 0 <= wall < 1e6 else 0.0
    error = record.get("error")
    frame.error = str(error)[:500] if error else None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 40
