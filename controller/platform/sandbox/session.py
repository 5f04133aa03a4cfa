"""One attached container: inputs in on stdin, output captured, end announced, outputs framed out.

Every sandbox container runs the holder shell of :mod:`controller.platform.sandbox.holder` as PID 1.
The controller attaches to it once, right after it starts (for a warm container: while it
waits in the pool), with stdin, stdout and stderr on one hijacked connection. Through it:

* the handover is one line and the inputs' archive written to stdin (no engine round trip);
* stdout and stderr are drained by a thread into a bounded capture (first N bytes kept, the
  rest counted), so a chatty program never blocks on a full pipe;
* a warm command announces that its preparation is done with the ready marker
  (``\\x1esandloop-ready\\x1e``) before the handover;
* the end of the program is the holder's end marker on stdout, carrying its exit status;
  what follows it are the holder's output frames (:mod:`controller.platform.sandbox.outputs`),
  decoded with bounded memory and never mixed into the captured output. Markers are
  removed from the capture.

Markers are not authenticated: the sandboxed program could print one early. That only
makes the controller stop listening to the program sooner, believe an exit status it could
have chosen anyway, and take outputs it could have written anyway; reads stay bounded.
"""

from __future__ import annotations

import contextlib
import re
import socket as socketlib
import threading
import time
from dataclasses import dataclass
from typing import Any

from docker.utils.socket import frames_iter

from agents.ports.errors import InfraFault
from agents.ports.sandbox import CapturedStream
from controller.platform.sandbox.holder import END_PATTERN, handover_line
from controller.platform.sandbox.outputs import Collected, OutputFrames

_STREAMS = {1: "stdout", 2: "stderr"}
#: Printed by a warm command once it is ready for its handover.
READY_MARKER = b"\x1esandloop-ready\x1e"
_MARKER = re.compile(END_PATTERN + rb"|" + re.escape(READY_MARKER))
#: Longest marker: \x1e + "sandloop-end " + up to 3 digits + " " + up to 10 digits + \x1e.
_MARKER_MAX = 1 + len("sandloop-end ") + 3 + 1 + 10 + 1


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

    def stream(self, name: str) -> CapturedStream:
        """The captured stream so far."""
        return CapturedStream(bytes(self.buffers[name]), self.totals[name])


class HolderStdout:
    """Splits the container's stdout: the program's output, the holder's markers, the output frames.

    Bytes that could be the start of a marker (a record separator in the last few bytes) are
    held back until the next chunk says what they are, so a marker split across chunks is
    still found and never reaches the capture.
    """

    def __init__(self, capture: StreamCapture, frames: OutputFrames) -> None:
        """Feed the program's output to ``capture`` and what follows the end marker to ``frames``."""
        self.capture, self.frames = capture, frames
        self.status: int | None = None
        self.pids_limited = False
        self.ready = False
        self._pending = b""

    def feed(self, chunk: bytes) -> None:
        """Route the next stdout bytes."""
        if self.status is not None:
            self.frames.feed(chunk)
            return
        data = self._pending + chunk
        found = _MARKER.search(data)
        while found is not None:
            self.capture.feed("stdout", data[:found.start()])
            data = data[found.end():]
            if found.group(1) is not None:
                self.status, self._pending = int(found.group(1)), b""
                self.pids_limited = int(found.group(2) or 0) > 0
                self.frames.feed(data)
                return
            self.ready = True
            found = _MARKER.search(data)
        cut = data.rfind(b"\x1e", max(0, len(data) - (_MARKER_MAX - 1)))
        cut = len(data) if cut < 0 else cut
        self.capture.feed("stdout", data[:cut])
        self._pending = data[cut:]

    def flush(self) -> None:
        """The stream ended: bytes held back were output after all."""
        if self.status is None:
            self.capture.feed("stdout", self._pending)
        self._pending = b""


class AttachedSession:
    """The attach connection of one started container, drained by a thread."""

    def __init__(self, api: Any, container_id: str, output_limit: int, frames: OutputFrames, *,
                 stdin: bool = True) -> None:
        """Attach to ``container_id`` (stdin, stdout, stderr) and start draining its output.

        With ``stdin=False`` (a warm container the service's workers keep, to hand to a run's
        process later) the attach leaves stdin alone: the run attaches to it in its turn.
        """
        self.capture = StreamCapture(output_limit)
        self._stdout = HolderStdout(self.capture, frames)
        self._frames = frames
        self._marker, self._collected, self._ended = threading.Event(), threading.Event(), threading.Event()
        self.ready_at: float | None = None  # monotonic time the ready marker arrived
        self._socket = api.attach_socket(container_id, params={"stdin": int(stdin), "stdout": 1, "stderr": 1,
                                                                   "stream": 1})
        self._raw = getattr(self._socket, "_sock", self._socket)
        self._thread = threading.Thread(target=self._drain, name="sandloop-attach", daemon=True)
        self._thread.start()

    @property
    def ended(self) -> bool:
        """Whether the output stream ended (the container exited or was removed)."""
        return self._ended.is_set()

    @property
    def cut_short(self) -> bool:
        """Whether the stream ended before the holder's last frame: the container went away
        (its end marker or its output frames never came; malformed frames are not this)."""
        return self.ended and not self._frames.finished

    @property
    def ready(self) -> bool:
        """Whether a warm command said it is ready (its preparation is done)."""
        return self.ready_at is not None

    @property
    def pids_limited(self) -> bool:
        """Whether the holder's end marker said a fork failed at the process limit."""
        return self._stdout.pids_limited

    @property
    def exit_status(self) -> int | None:
        """The status in the holder's end marker, once it came."""
        return self._stdout.status

    def handover(self, archive: bytes) -> None:
        """The handover line and the inputs' archive on stdin: the holder unpacks, then starts or tells the program."""
        try:
            self._raw.sendall(handover_line(len(archive)) + archive)
        except OSError as exc:  # nothing of the program has run yet: the container went away
            raise InfraFault("container_gone", "the sandbox closed its input before the handover "
                             f"({exc.strerror or exc})") from exc

    def wait(self, timeout: float) -> bool:
        """Wait for the program's end (marker or stream end); False if ``timeout`` passed first."""
        return self._marker.wait(timeout)

    def outputs(self, timeout: float) -> Collected:
        """The output files the holder sent after its end marker (waits up to ``timeout`` for the last)."""
        self._collected.wait(timeout)
        return self._frames.result()

    def close(self) -> None:
        """Close the connection (the drain thread then ends) and wait briefly for the thread."""
        with contextlib.suppress(OSError):
            self._raw.shutdown(socketlib.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._socket.close()
        self._thread.join(timeout=5)

    def _drain(self) -> None:
        try:
            for stream_id, chunk in frames_iter(self._socket, tty=False):
                name = _STREAMS.get(stream_id)
                if name == "stdout" and chunk:
                    self._on_stdout(chunk)
                elif name == "stderr":
                    self.capture.feed(name, chunk)
        except (OSError, ValueError):
            pass  # the connection ends when the container is killed or removed
        finally:
            self._stdout.flush()
            for event in (self._ended, self._marker, self._collected):
                event.set()

    def _on_stdout(self, chunk: bytes) -> None:
        self._stdout.feed(chunk)
        if self._stdout.ready and self.ready_at is None:
            self.ready_at = time.monotonic()
        if self._stdout.status is not None:
            self._marker.set()
            if self._frames.finished:
                self._collected.set()
