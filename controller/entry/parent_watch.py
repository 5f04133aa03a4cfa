"""``run --watch-stdin``: stop the run, as Ctrl-C does, when standard input closes.

The service runs each run as a child whose stdin is a pipe it never writes to. If the
service dies (even by ``kill -9``) the pipe closes, and the child interrupts itself: its
containers are removed, its checkpoint stays, and the service's next worker resumes it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def _wait_for_eof() -> None:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return
    try:
        while stream.read(4096):
            pass  # nothing is ever written; anything that is, is ignored
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), signal.SIGINT)


def watch_stdin() -> None:
    """Interrupt this process (SIGINT, handled as KeyboardInterrupt) once stdin reaches its end."""
    threading.Thread(target=_wait_for_eof, name="sandloop-stdin-watch", daemon=True).start()
