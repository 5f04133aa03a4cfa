"""Runs inside a Kubernetes sandbox Pod: ``launch`` the program, then ``collect`` what it left.

Usage (``--out-dir DIR`` before ``--`` moves /work/out, for tests on a host):
    k8s_pod.py launch --timeout S --fsize BYTES --nofile N --output-bytes N -- ARGV...
    k8s_pod.py collect --output-bytes N --collect-bytes N --frame-bytes N -- NAME...

``launch`` runs in the Pod's init container, as PID 1, beside the untrusted program: it
makes itself undumpable (no ptrace, no /proc/1/mem by the program), ignores every signal
the program could send it, sets RLIMIT_FSIZE/RLIMIT_NOFILE, runs ARGV with stdout and
stderr sent to files under ``/work/out/.sandloop/``, kills it at the timeout, then kills
every other process left in the container (``kill(-1)``) *before* it writes ``status.json``,
so nothing the program started can rewrite it. It always exits 0, so that the collector runs
even when the program failed; the program's own status is in ``status.json``.

``collect`` is the Pod's main container: the same image, a separate process namespace, the
output ``emptyDir`` mounted read-only. It frames the status, both streams and the expected
files (regular files only, opened without following links, each capped) as JSON lines into
*its own* log, ending with a record that carries the count and SHA-256 of every line before
it. The controller reads only this container's log as the result, so nothing the program
prints can be taken for a frame; a frame that was cut short fails its digest.

Standard library only: it must run in any image that has python3.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time

FRAME = "sandloop.k8s/1"
OUT_DIR = "/work/out"
STATE = ".sandloop"
CHUNK = 6144  # raw bytes per data line: short log lines, never split by the runtime
_PR_SET_DUMPABLE = 4


def _undumpable() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _ignore_signals() -> list[int]:
    changed = []
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            continue
        try:
            signal.signal(sig, signal.SIG_IGN)
            changed.append(sig)
        except (OSError, ValueError):
            pass
    return changed


def _child_setup(ignored: list[int], fsize: int, nofile: int):  # type: ignore[no-untyped-def]
    import resource

    def setup() -> None:
        for sig in ignored:
            signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        os.setsid()

    return setup


def _oom_kills() -> int:
    """OOM kills in this container's memory cgroup so far (cgroup v2 or v1); 0 if unknown."""
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"),
                      ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path, encoding="ascii") as handle:
                for line in handle:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _reset_state_dir(state_dir: str) -> None:
    """Remove whatever sits at ``state_dir`` (the program may have planted links) and recreate it."""
    import shutil

    try:
        info = os.lstat(state_dir)
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(state_dir, ignore_errors=True)
        else:
            os.unlink(state_dir)
    os.mkdir(state_dir, 0o755)


def launch(timeout: float, fsize: int, nofile: int, output_bytes: int, argv: list[str],
           out_dir: str = OUT_DIR) -> int:
    """Run ``argv`` as described in the module docstring; always return 0."""
    state_dir = f"{out_dir}/{STATE}"
    _undumpable()
    ignored = _ignore_signals()
    _reset_state_dir(state_dir)
    started = time.monotonic()
    timed_out, exit_code, error = False, None, None
    with open(f"{state_dir}/stdout", "w+b") as out, open(f"{state_dir}/stderr", "w+b") as err:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    preexec_fn=_child_setup(ignored, fsize, nofile), cwd="/tmp")
        except OSError as exc:
            proc, error = None, f"cannot start {argv[0]}: {exc}"
        if proc is not None:
            try:
                exit_code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
        wall = time.monotonic() - started
        if proc is not None and exit_code is None:
            proc.kill()
            exit_code = proc.wait()
        if os.getpid() == 1:
            _kill_all_others()  # every process the program left behind, before any status
        # Read the streams through our own descriptors: the program may have renamed or
        # replaced the paths, never these inodes' identity.
        streams = {name: _read_fd(handle.fileno(), output_bytes) for name, handle in
                   (("stdout", out), ("stderr", err))}
    _reset_state_dir(state_dir)
    for name, (data, total) in streams.items():
        _write(f"{state_dir}/{name}", data)
        _write(f"{state_dir}/{name}.total", str(total).encode("ascii"))
    status = {"exit_code": exit_code, "timed_out": timed_out, "oom_kills": _oom_kills(),
              "wall_seconds": round(wall, 3), "error": error}
    _write(f"{state_dir}/status.json", json.dumps(status).encode("utf-8"))
    return 0


def _kill_all_others() -> None:
    """As PID 1: SIGKILL every other process in the container (none left is fine)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        return
    while True:  # reap them, so none is still writing when the status is written
        try:
            if os.waitpid(-1, 0)[0] == 0:
                return
        except ChildProcessError:
            return


def _read_fd(fd: int, cap: int) -> tuple[bytes, int]:
    total = os.fstat(fd).st_size
    chunks, offset = [], 0
    while offset < min(cap, total):
        chunk = os.pread(fd, min(cap - offset, 1 << 16), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks), total


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _read_regular(path: str, cap: int) -> tuple[bytes, int]:
    """Up to ``cap`` bytes of a regular file (links not followed) and its size; (b"", 0) otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b"", 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"", 0
        chunks, left = [], cap
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


class _Framer:
    """Writes JSON lines to stdout, hashing each, and stops at a byte budget."""

    def __init__(self, budget: int) -> None:
        self.digest, self.count, self.left = hashlib.sha256(), 0, budget

    def emit(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n"
        self.left -= len(line)
        self.digest.update(line)
        self.count += 1
        sys.stdout.buffer.write(line)

    def blob(self, kind: str, name: str, data: bytes, total: int) -> None:
        self.emit({"t": kind, "name": name, "total": total, "size": len(data)})
        for start in range(0, len(data), CHUNK):
            self.emit({"t": "d", "b": base64.b64encode(data[start:start + CHUNK]).decode("ascii")})

    def end(self) -> None:
        line = json.dumps({"t": "end", "count": self.count, "sha256": self.digest.hexdigest()})
        sys.stdout.buffer.write(line.encode("ascii") + b"\n")
        sys.stdout.buffer.flush()


def collect(output_bytes: int, collect_bytes: int, frame_bytes: int, names: list[str],
            out_dir: str = OUT_DIR) -> int:
    """Frame status, streams and files into this container's stdout; exit 0."""
    state_dir = f"{out_dir}/{STATE}"
    # base64 grows data by 4/3, plus JSON per line: keep the raw budget at 70 % of the log budget.
    raw_budget = min(collect_bytes + 2 * output_bytes, frame_bytes * 7 // 10)
    framer = _Framer(frame_bytes)
    framer.emit({"t": "begin", "frame": FRAME})
    status_raw, _ = _read_regular(f"{state_dir}/status.json", 4096)
    try:
        status = json.loads(status_raw.decode("utf-8")) if status_raw else {"error": "no status.json"}
    except ValueError:
        status = {"error": "unreadable status.json"}
    framer.emit({"t": "status", **status} if isinstance(status, dict) else {"t": "status"})
    for name in ("stdout", "stderr"):
        data, _ = _read_regular(f"{state_dir}/{name}", min(output_bytes, raw_budget))
        total_raw, _ = _read_regular(f"{state_dir}/{name}.total", 32)
        total = int(total_raw) if total_raw.strip().isdigit() else len(data)
        raw_budget -= len(data)
        framer.blob("stream", name, data, total)
    file_budget = min(collect_bytes, raw_budget)
    for name in names:
        data, size = _read_regular(f"{out_dir}/{name}", file_budget + 1)
        if size == 0 and not data and not _is_regular(f"{out_dir}/{name}"):
            continue
        data = data[:file_budget]
        file_budget -= len(data)
        framer.blob("file", name, data, size)
    framer.end()
    return 0


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def main(argv: list[str]) -> int:
    """Parse ``launch``/``collect`` and their options (argparse-free: a tiny, fixed grammar)."""
    mode, rest = argv[0], argv[1:]
    split = rest.index("--")
    options = dict(zip(rest[:split:2], rest[1:split:2]))
    tail = rest[split + 1:]
    if mode == "launch":
        return launch(float(options["--timeout"]), int(options["--fsize"]), int(options["--nofile"]),
                      int(options["--output-bytes"]), tail, options.get("--out-dir", OUT_DIR))
    if mode == "collect":
        return collect(int(options["--output-bytes"]), int(options["--collect-bytes"]),
                       int(options["--frame-bytes"]), tail, options.get("--out-dir", OUT_DIR))
    print(f"k8s_pod.py: unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
