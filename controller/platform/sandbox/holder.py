"""The holder: a trusted ``/bin/sh`` as PID 1 that carries inputs in and outputs out.

``/work`` is a tmpfs-backed volume (the kernel bounds what a sandbox can write there). Such
a volume is unmounted, and emptied, when its container stops, so the outputs must be read
while the container still runs. The holder does the whole conversation over the one
attached stdin/stdout connection, with nothing but POSIX ``sh`` and coreutils, so it works
for any Debian-based image (python-parser, idris2) and needs no engine call but the attach:

1. **hand over**: it reads the handover line ``go <size>`` on stdin, then exactly ``size``
   bytes of a tar archive (the inputs), and unpacks them under ``/work``; a *warm* command
   (started at once, doing its imports meanwhile) is then told ``go`` on its own stdin; a
   plain command is started only now, with stdin from ``/dev/null``;
2. it waits for the command, then kills every other process in the sandbox
   (``kill -KILL -1`` from PID 1), so nothing the program started can write any more;
3. it prints the end marker (``\\x1esandloop-end <status> <forks refused>\\x1e``: the
   second number is how often a fork or clone failed at the process limit, the ``max``
   count of the sandbox cgroup's ``pids.events``, read with shell builtins) on stdout, then each
   expected output as a frame, ``\\x1esandloop-file <name> <kind> [<n>]\\x1e`` followed, for
   kind ``data``, by exactly ``n`` bytes of the file; then ``\\x1esandloop-done\\x1e``.
   Only regular files are read: a link, a folder, a pipe or anything else is named by its
   kind and never opened; a file larger than what is left of the collection cap is
   announced as ``big`` and not sent (sizes come from ``wc -c`` on the open file, which
   fstat()s it, not from ``stat``: coreutils' statx fails with EINVAL on gVisor's gofer mounts)
   (:mod:`controller.platform.sandbox.outputs` decodes all this);
4. it keeps the container running by reading stdin until the controller kills the
   container (or until stdin closes: a controller that died takes its containers down).

The names to collect and the cap are the holder's own arguments, fixed when the container
is created, not something the program could edit. PID 1 of a PID namespace ignores signals
it has no handler for, so the sandboxed child cannot kill the holder. It could ptrace it
(same uid, no Yama here) or print a forged marker and frames early: either only loses the
program its own outputs or lets it choose them, which it can do anyway by writing them.
"""

from __future__ import annotations

#: The handover line's first word; the archive's size follows it.
GO_WORD = b"go"
#: The end marker as a regular expression over bytes; group 1 is the exit status, group 2
#: (optional) how often a fork failed at the process limit.
END_PATTERN = rb"\x1esandloop-end ([0-9]{1,3})(?: ([0-9]{1,10}))?\x1e"
#: Exit status of a holder that could not unpack the inputs (no program ran).
HANDOVER_FAILED = 125

#: Catch (no-op) the signals a same-uid child could send, so it cannot end the holder; a
#: caught signal is reset to its default in the child at exec, so the program is unaffected.
#: No globbing (names are expanded unquoted, split on commas).
_PRELUDE = "set -f; trap : HUP INT QUIT TERM USR1 USR2 ALRM; cap=$1; names=$2; shift 2; "
#: Receive the inputs: the handover line, then exactly that many bytes of tar (head reads no
#: byte past them). Files keep the archive's modes (inputs read-only, out/ writable).
_HANDOVER = (
    "handover() { IFS=' ' read -r _ size || return 1; "
    "case $size in ''|*[!0-9]*) return 1;; esac; "
    "head -c \"$size\" | tar -x -m -f - -C /work; }; "
    "refuse() { echo 'sandloop-holder: the inputs could not be unpacked' >&2; }; "
)
#: Send the outputs, then hold: read stdin until EOF (status 1); a read interrupted by a
#: signal (>128) goes on. ``kill -1`` from PID 1 reaches every other process of the sandbox.
_END = (
    "s=$?; kill -KILL -1 2>/dev/null; p=0; "
    "for f in /sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; do "
    "if [ -r \"$f\" ]; then read -r _ p < \"$f\" || p=0; break; fi; done; case $p in ''|*[!0-9]*) p=0;; esac; "
    "printf '\\036sandloop-end %s %s\\036' \"$s\" \"$p\"; left=$cap; "
    "IFS=,; for n in $names; do f=/work/out/$n; "
    "if [ -L \"$f\" ]; then k=link; elif [ -d \"$f\" ]; then k=folder; "
    "elif [ -p \"$f\" ]; then k=pipe; elif [ ! -e \"$f\" ]; then k=missing; "
    "elif [ ! -f \"$f\" ]; then k=other; "
    "else z=$(wc -c < \"$f\") || z=-1; case $z in ''|*[!0-9]*) z=-1;; esac; "
    "if [ \"$z\" -lt 0 ]; then k=other; elif [ \"$z\" -gt \"$left\" ]; then k=\"big $z\"; "
    "else printf '\\036sandloop-file %s data %s\\036' \"$n\" \"$z\"; head -c \"$z\" -- \"$f\"; "
    "left=$((left - z)); continue; fi; fi; "
    "printf '\\036sandloop-file %s %s\\036' \"$n\" \"$k\"; done; printf '\\036sandloop-done\\036'; "
    "while :; do read -r _ && continue; [ $? -eq 1 ] && exit 0; done"
)
#: Plain command: receive the inputs, run, send the outputs, hold.
_WAIT_THEN_RUN = (
    _PRELUDE + _HANDOVER
    + f"handover || {{ refuse; exit {HANDOVER_FAILED}; }}; \"$@\" </dev/null; " + _END
)
#: Warm command (already preparing, waits for ``go`` on its stdin): receive, tell it, send, hold.
#: If the inputs cannot be unpacked it is killed instead of told (it must not run without them).
_RUN = (
    _PRELUDE + _HANDOVER
    + "{ if handover; then echo go; else refuse; kill -KILL -1; fi; } | \"$@\"; " + _END
)


def held(command: tuple[str, ...], *, waits_itself: bool, collect: tuple[str, ...], cap: int) -> list[str]:
    """The argv that runs ``command`` under the holder.

    Args:
        command: The program's argv.
        waits_itself: The command reads the go line itself (a warm command); otherwise the
            holder starts it once the inputs are in place.
        collect: Plain file names (see :func:`agents.ports.sandbox.check_file_name`) to
            send back from ``/work/out``.
        cap: Bytes of all collected files together.
    """
    script = _RUN if waits_itself else _WAIT_THEN_RUN
    return ["/bin/sh", "-c", script, "sandloop-holder", str(int(cap)), ",".join(collect), *command]


def handover_line(archive_size: int) -> bytes:
    """The line written to the holder's stdin right before the inputs' archive."""
    return GO_WORD + b" " + str(int(archive_size)).encode() + b"\n"
