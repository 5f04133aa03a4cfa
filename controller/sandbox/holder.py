"""The holder: a trusted ``/bin/sh`` as PID 1 that keeps a sandbox open until it is read.

``/work`` is a tmpfs-backed volume (the kernel bounds what a sandbox can write there). Such
a volume is unmounted, and emptied, when its container stops, so the outputs must be read
while the container still runs. The holder makes that possible for any image with a POSIX
``sh`` (python-parser, idris2):

1. it waits for the handover line on stdin (a *warm* command does that waiting itself, after
   its imports, so the holder starts it at once);
2. it runs the command as its child;
3. it prints the end marker (``\\x1esandloop-end <status>\\x1e``) on stdout;
4. it keeps the container running by reading stdin until the controller kills the
   container (or until stdin closes: a controller that died takes its containers down).

PID 1 of a PID namespace ignores signals it has no handler for, so the sandboxed child
cannot kill the holder. It could ptrace it (same uid, no Yama here) and make it lie about
the exit status or exit early: that only loses the program its own outputs or status.
"""

from __future__ import annotations

#: Written to the container's stdin to start the execution.
GO_LINE = b"go\n"
#: The end marker as a regular expression over bytes; group 1 is the exit status.
END_PATTERN = rb"\x1esandloop-end ([0-9]{1,3})\x1e"

#: Catch (no-op) the signals a same-uid child could send, so it cannot end the holder; a
#: caught signal is reset to its default in the child at exec, so the program is unaffected.
_TRAP = "trap : HUP INT QUIT TERM USR1 USR2 ALRM; "
#: Hold: read stdin until EOF (status 1); a read interrupted by a signal (>128) goes on.
_END = ("s=$?; printf '\\036sandloop-end %s\\036' \"$s\"; "
        "while :; do read -r _ && continue; [ $? -eq 1 ] && exit 0; done")
#: Plain command: wait for the go line, run, announce the end, hold.
_WAIT_THEN_RUN = _TRAP + "read -r _ || exit 0; \"$@\"; " + _END
#: Warm command (waits for the go line itself, after its preparation): run, announce, hold.
_RUN = _TRAP + "\"$@\"; " + _END


def held(command: tuple[str, ...], *, waits_itself: bool) -> list[str]:
    """The argv that runs ``command`` under the holder.

    Args:
        command: The program's argv.
        waits_itself: The command reads the go line itself (a warm command); otherwise the
            holder reads it before starting the command.
    """
    script = _RUN if waits_itself else _WAIT_THEN_RUN
    return ["/bin/sh", "-c", script, "sandloop-holder", *command]
