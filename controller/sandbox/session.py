"""One attached container: its stdin for the handover, its output captured, its end announced.

Every sandbox container runs the holder shell of :mod:`controller.sandbox.holder` as PID 1.
The controller attaches to it once, right after it starts (for a warm container: while it
waits in the pool), with stdin, stdout and stderr on one hijacked connection. Through it:

* the handover is one line written to stdin (no engine round trip, nothing polled);
* stdout and stderr are drained by a thread into a bounded capture (first N bytes kept, the
  rest counted), so a chatty program never blocks on a full pipe;
* the end of the program is the holder's end marker on stdout, carrying its exit status.
  The marker is removed from the captured output. The container is then still running
  (the holder waits), so its tmpfs-backed ``/work`` is still mounted and can be read.

The marker is not authenticated: the sandboxed program could print one early. That only
makes the controller read the program's own outputs sooner and believe an exit status the
program could have chosen anyway; it gives no power over the host (reads stay bounded).
"""

from __future__ import annotations

import re
import socket as socketlib
import threading
from dataclasses import dataclass
from typing import Any

from docker.utils.socket import frames_iter

from controller.sandbox.holder import END_PATTERN, GO_LINE
from controller.sandbox.spec import CapturedStream

_STREAMS = {1: "stdout", 2: "stderr"}
#: Longest marker: \x1e + "sandloop-end " + up to 3 digits + \x1e.
_MARKER_MAX = 1 + len("sandloop-end ") + 3 + 1
_MARKER = re.compile(END_PATTERN)


@dataclass
class StreamCapture:
    """Keeps the first ``limit`` bytes of each stream and counts the rest."""

    limit: int

    def __post_init__(self) -> None:
        self.buffers = {"stdout": bytearray(), "stderr": bytearray()}
        self.totals = {"stdout": 0, "stderr": 0}

    def feed(self, name: str, chunk: bytes | None) -> None:
        """Count ``chunk`` and keep what fits under the limit."""
        if not chunk:
            return
        self.totals[name] += len(chunk)
        room = self.limit - len(self.buffers[name])
        if room > 0:
            self.buffers[name] += chunk[:room]

    def cut(self, name: str, start: int, length: int) -> None:
        """Forget ``length`` bytes at stream offset ``start`` (the holder's marker)."""
        buffer = self.buffers[name]
        if start < len(buffer):
            del buffer[start:start + length]
        self.totals[name] -= length

    def stream(self, name: str) -> CapturedStream:
        """The captured stream so far."""
        return CapturedStream(bytes(self.buffers[name]), self.totals[name])


class _MarkerScanner:
    """Finds the holder's end marker in stdout, across frame boundaries."""

    def __init__(self) -> None:
        self.tail = b""
        self.tail_offset = 0  # stream offset of tail[0]

    def scan(self, chunk: bytes, chunk_offset: int) -> tuple[int, int, int] | None:
        """(offset, length, status) of a marker ending in ``chunk``, else None."""
        window = self.tail + chunk
        found = _MARKER.search(window)
        if found is not None:
            self.tail, self.tail_offset = b"", chunk_offset + len(chunk)
            return self.tail_offset - len(window) + found.start(), len(found.group(0)), int(found.group(1))
        keep = window[-(_MARKER_MAX - 1):]
        self.tail, self.tail_offset = keep, chunk_offset + len(chunk) - len(keep)
        return None


class AttachedSession:
    """The attach connection of one started container, drained by a thread."""

    def __init__(self, api: Any, container_id: str, output_limit: int) -> None:
        """Attach to ``container_id`` (stdin, stdout, stderr) and start draining its output."""
        self.capture = StreamCapture(output_limit)
        self.exit_status: int | None = None
        self._done = threading.Event()
        self._ended = threading.Event()
        self._socket = api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self._raw = getattr(self._socket, "_sock", self._socket)
        self._thread = threading.Thread(target=self._drain, name="sandloop-attach", daemon=True)
        self._thread.start()

    @property
    def ended(self) -> bool:
        """Whether the output stream ended (the container exited or was removed)."""
        return self._ended.is_set()

    def go(self) -> None:
        """Hand over: one line on stdin starts the program (or lets a warm one proceed)."""
        self._raw.sendall(GO_LINE)

    def wait(self, timeout: float) -> bool:
        """Wait for the program's end (marker or stream end); False if ``timeout`` passed first."""
        return self._done.wait(timeout)

    def close(self) -> None:
        """Close the connection (the drain thread then ends) and wait briefly for the thread."""
        try:
            self._raw.shutdown(socketlib.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._socket.close()
        except OSError:
            pass
        self._thread.join(timeout=5)

    def _drain(self) -> None:
        scanner, offset = _MarkerScanner(), 0
        try:
            for stream_id, chunk in frames_iter(self._socket, tty=False):
                name = _STREAMS.get(stream_id)
                if name is None or not chunk:
                    continue
                self.capture.feed(name, chunk)
                if name == "stdout":
                    offset = self._after_stdout(scanner, chunk, offset)
        except (OSError, ValueError):
            pass  # the connection ends when the container is killed or removed
        finally:
            self._ended.set()
            self._done.set()

    def _after_stdout(self, scanner: _MarkerScanner, chunk: bytes, offset: int) -> int:
        if self._done.is_set():
            return offset + len(chunk)
        found = scanner.scan(chunk, offset)
        if found is None:
            return offset + len(chunk)
        start, length, status = found
        self.capture.cut("stdout", start, length)
        self.exit_status = status
        self._done.set()
        return offset + len(chunk) - length
