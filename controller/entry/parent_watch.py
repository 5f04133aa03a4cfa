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

from controller.platform.stop import PROCESS


def _wait_for_eof(fd: int) -> None:
    # os.read on the descriptor, not sys.stdin: a daemon thread blocked inside the buffered
    # reader's lock makes the interpreter abort at exit.
    try:
        while os.read(fd, 4096):
            pass  # nothing is ever written; anything that is, is ignored
    except OSError:
        pass
    # The switch first: an execution waiting in any thread kills its container and no new one
    # (an infra retry among them) starts; the signal then unwinds the main thread as Ctrl-C does.
    PROCESS.stop("parent gone")
    os.kill(os.getpid(), signal.SIGINT)


def take_back_sigint() -> None:
    """Handle SIGINT as Ctrl-C again if it was ignored, as a shell does for what it starts in the background
    (``nohup … &``); the children this process starts inherit the handling."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def watch_stdin() -> None:
    """Interrupt this process (SIGINT, handled as KeyboardInterrupt) once stdin reaches its end.

    A service started in the background by a shell (``nohup sandloop serve &``) has SIGINT ignored,
    and its run processes inherit that: neither this watch nor a cancel (SIGINT to the run's group)
    would stop them. A run that is watched takes SIGINT back first."""
    take_back_sigint()
    if sys.stdin is None:
        return
    fd = sys.stdin.fileno()
    threading.Thread(target=_wait_for_eof, args=(fd,), name="sandloop-stdin-watch", daemon=True).start()
