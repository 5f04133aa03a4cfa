"""``run --watch-stdin``: a child whose parent died (its stdin closed) interrupts itself."""

from __future__ import annotations

import signal
import subprocess
import sys

CHILD = """
import time
from controller.entry.parent_watch import watch_stdin
watch_stdin()
try:  # the print too: the interrupt can arrive while print returns, once the parent read the line
    print("watching", flush=True)
    time.sleep(120)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise SystemExit(130)
raise SystemExit(0)
"""


def test_closing_stdin_interrupts_the_process():
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "watching"
    proc.stdin.close()
    out = proc.stdout.read()
    assert (proc.wait(timeout=60), out.strip()) == (130, "interrupted")


def test_a_watching_process_exits_cleanly_with_stdin_open():
    """The watcher thread does not make the interpreter abort at exit (it reads the raw descriptor).

    stdin stays open until the process has ended: closing it earlier would (rightly) interrupt it.
    """
    code = "from controller.entry.parent_watch import watch_stdin; watch_stdin(); print('done')"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out, err = proc.stdout.read(), proc.stderr.read()  # both reach EOF when the process exits
    code_ = proc.wait(timeout=60)
    proc.stdin.close()
    assert (code_, out.strip(), err) == (0, "done", "")


def test_a_child_started_with_sigint_ignored_still_interrupts_itself():
    """A service started in the background by a shell (``nohup ... &``) ignores SIGINT, and so would
    its run processes: the watch takes SIGINT back, so the run still stops when its parent goes."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # noqa: PLW1509
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "watching"
    proc.stdin.close()
    out = proc.stdout.read()
    assert (proc.wait(timeout=60), out.strip()) == (130, "interrupted")
