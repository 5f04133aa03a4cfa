"""What every hostile-parser test uses: run the real controller as a user would, and measure.

* :func:`run_controller` runs ``python -m controller ...`` as a child process and reads its
  peak resident memory from ``wait4`` (that child's own rusage, not the test process's) and
  its own high-water mark (``VmHWM`` of its process image, sampled until it exits). Linux's
  ``ru_maxrss`` keeps the image the child was forked from, so a large pytest process (a whole
  CI session) shows through it; ``VmHWM`` belongs to the exec'd controller alone.
* :class:`VolumeWatcher` polls the size on the host's disk of the volumes the child's
  sandboxes hold (their ``org.sandloop.owner`` is the child), for the largest seen.
* :func:`tree` snapshots a folder, so a test can show nothing was written outside the run
  folder.
* :func:`check_table` reads the ``check`` table of several parsers (parser → outcome, first
  difference).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from controller.platform.settings import PROJECT_ROOT

MIB = 1024 * 1024


@dataclass(frozen=True)
class Finished:
    """A finished controller process: status, output and peak RSS in bytes."""

    code: int
    stdout: str
    stderr: str
    peak_rss: int
    pid: int
    peak_hwm: int = 0
    """The controller's own resident high-water mark in bytes (VmHWM), 0 if never read."""

    @property
    def owner(self) -> str:
        """The owner label the child's containers and volumes carried."""
        return f"{socket.gethostname()}:{self.pid}"


def controller_env(tmp_path: Path, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a controller whose every folder is under ``tmp_path``."""
    return {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),  # the child runs in tmp_path; `-m tests.…` needs the repo
        "SBX_DATA_DIR": str(data_dir),
        "SBX_RUNS_DIR": str(tmp_path / "runs"),
        "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"),
        "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
        "SBX_LOG_FORMAT": "json",
        **extra,
    }


def run_controller(tmp_path: Path, env: dict[str, str], *args: str, module: str = "controller",
                   on_start: object = None) -> Finished:
    """Run ``python -m <module> args`` in ``tmp_path``; return its status, output and peak RSS."""
    out, err = tmp_path / ".stdout", tmp_path / ".stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen([sys.executable, "-m", module, *args], cwd=tmp_path, env=env,
                                 stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
        if callable(on_start):
            on_start(child.pid)
        hwm, status, usage = _wait_sampling_hwm(child.pid)
        child.returncode = os.waitstatus_to_exitcode(status)
    finished = Finished(child.returncode, out.read_text(errors="replace"), err.read_text(errors="replace"),
                        usage.ru_maxrss * 1024, child.pid, hwm)
    out.unlink()
    err.unlink()
    return finished


def _wait_sampling_hwm(pid: int) -> tuple[int, int, os.struct_rusage]:
    """Wait for ``pid``, reading its VmHWM every 20 ms meanwhile (the mark only grows)."""
    hwm = 0
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return hwm, status, usage
        hwm = max(hwm, _vm_hwm(pid))
        time.sleep(0.02)


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime (what a test compares before and after)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            stat = path.lstat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


def check_table(stdout: str, parsers: list[Path]) -> dict[str, tuple[str, str]]:
    """From ``check``'s table: parser stem → (outcome, first difference)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in stdout.splitlines():
        for path in parsers:
            if line.startswith(str(path) + " "):
                parts = line[len(str(path)):].split()
                outcome, rest = parts[0], line.split("s  ", 1)[-1] if "s  " in line else ""
                rows[path.stem] = (outcome, rest.strip())
    return rows


class VolumeWatcher:
    """Polls, from the host, the disk use of the volumes a controller process's sandboxes hold."""

    def __init__(self, client: object, interval: float = 0.1) -> None:
        self.client = client
        self.interval = interval
        self.owner = ""
        self.largest = 0
        self.seen_volume = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def start(self, pid: int) -> None:
        """Watch the volumes of the controller process ``pid``."""
        self.start_owner(f"{socket.gethostname()}:{pid}")

    def start_owner(self, owner: str) -> None:
        """Watch the volumes whose ``org.sandloop.owner`` is ``owner``."""
        self.owner = owner
        self._thread.start()

    def stop(self) -> int:
        """Stop polling; return the largest disk use seen, in bytes."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        return self.largest

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                volumes = self.client.volumes.list(filters={"label": f"org.sandloop.owner={self.owner}"})
            except Exception:  # noqa: BLE001 - the engine may be busy; try again
                continue
            for volume in volumes:
                self.seen_volume = True
                self.largest = max(self.largest, disk_use(Path(volume.attrs.get("Mountpoint", "/nonexistent"))))


def disk_use(root: Path) -> int:
    """Bytes allocated on disk under ``root`` (0 when it is gone)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_blocks * 512
            except OSError:
                continue
    return total
