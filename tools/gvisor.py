"""``make gvisor``: Debian's gVisor (``runsc``) installed and registered with the Docker engine.

Idempotent, in the project's one way of installing host programs (:mod:`controller.platform.apt`:
as root with apt-get; elsewhere one line says what to do):

1. ``runsc`` missing: ``apt-get install runsc`` (Debian's package, bookworm and later);
2. the engine's config (``/etc/docker/daemon.json``) gains ``runtimes.runsc`` = runsc's path
   with ``--platform=<GVISOR_PLATFORM>`` (default ``ptrace``) and ``--network=none``. Every
   other key is kept; the file is backed up first (``daemon.json.bak-<UTC time>``) and
   written atomically with its mode;
3. the engine reloads its config on SIGHUP (``runtimes`` is a reloadable key: no restart, no
   running container is touched); the tool then waits until ``docker info`` lists ``runsc``.

Already registered with the same arguments and listed by the engine: nothing is written, one
line says so. ``--network=none``: runsc refuses a container on the host's network namespace
when it runs its own network stack (sandloop's sandboxes have no network at all). Exit 0 when
the engine lists runsc at the end, 2 when it cannot be done here (not root, no apt-get, a remote
engine), 1 when a step failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.ports.errors import EngineUnavailable
from controller.platform import apt
from controller.platform.sandbox.engine import connect, engine_runtimes

RUNTIME = "runsc"
DAEMON_JSON = Path("/etc/docker/daemon.json")
#: gVisor's platforms: how it intercepts the program's system calls. ptrace works everywhere
#: (also nested in a VM without KVM); systrap (gVisor 2023+, its default since) is faster;
#: kvm needs /dev/kvm. Debian bookworm's package (20221219) has ptrace and kvm.
PLATFORMS = ("ptrace", "systrap", "kvm")
WAIT_SECONDS = 30.0


class NotHere(Exception):
    """It cannot be done on this machine as this user; the message says what to do (exit 2)."""


class Failed(Exception):
    """A step failed (exit 1)."""


def runtime_entry(runsc: str, platform: str) -> dict[str, Any]:
    """The ``runtimes.runsc`` entry of ``daemon.json``."""
    return {"path": runsc, "runtimeArgs": [f"--platform={platform}", "--network=none"]}


def merged(config: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``runtimes.runsc`` set to ``entry``; every other key (and runtime) kept."""
    runtimes = config.get("runtimes")
    if runtimes is not None and not isinstance(runtimes, dict):
        raise Failed(f"{DAEMON_JSON}: 'runtimes' is not an object; fix it by hand")
    return {**config, "runtimes": {**(runtimes or {}), RUNTIME: entry}}


def read_config(path: Path) -> dict[str, Any]:
    """The engine's config file as a dict ({} if it does not exist).

    Raises:
        Failed: it is not a JSON object.
    """
    if not path.exists():
        return {}
    try:
        config = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise Failed(f"{path} cannot be read as JSON ({exc}); fix it by hand") from exc
    if not isinstance(config, dict):
        raise Failed(f"{path} is not a JSON object; fix it by hand")
    return config


def write_config(path: Path, config: dict[str, Any], *, now: Callable[[], float] = time.time) -> Path | None:
    """Back ``path`` up (if it exists) and replace it atomically with ``config``, keeping its mode.

    Returns:
        The backup's path, or None when there was no file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = 0o644
    if path.exists():
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now()))}")
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(config, indent=2) + "\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def dockerd_pid() -> int:
    """The local engine's process id (the one ``pidof dockerd`` names).

    Raises:
        NotHere: no dockerd runs on this machine (a remote DOCKER_HOST, or a rootless engine).
    """
    done = subprocess.run(["pidof", "dockerd"], capture_output=True, text=True, check=False)
    pids = done.stdout.split()
    if done.returncode != 0 or len(pids) != 1:
        raise NotHere("no single local dockerd runs here (a remote DOCKER_HOST or several engines): "
                      f"add runtimes.{RUNTIME} to that engine's daemon.json by hand (docs/sandbox.md)")
    return int(pids[0])


def ensure_installed() -> str:
    """runsc's path, installed with apt-get if missing.

    Raises:
        NotHere: missing and this machine cannot install it (not root, or no apt-get).
        Failed: apt-get failed.
    """
    found = shutil.which(RUNTIME)
    if found:
        return found
    if not apt.can_install():
        raise NotHere("gVisor's runsc is not installed; run make gvisor as root on Debian (apt-get install runsc), "
                      "or install gVisor's own release (gvisor.dev/docs/user_guide/install)")
    print("==> installing runsc (gVisor) with apt-get", flush=True)
    for command in apt.install_commands([RUNTIME]):
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise Failed(f"apt-get failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    found = shutil.which(RUNTIME)
    if not found:
        raise Failed("apt-get installed runsc but it is not on PATH")
    return found


def listed() -> bool:
    """Whether the engine lists runsc now (False when no engine answers)."""
    try:
        client = connect(timeout=10)
    except EngineUnavailable:
        return False
    try:
        return RUNTIME in engine_runtimes(client)
    finally:
        client.close()


def wait_listed(seconds: float = WAIT_SECONDS) -> bool:
    """Wait until the engine lists runsc (it reloads its config shortly after SIGHUP)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if listed():
            return True
        time.sleep(0.5)
    return False


def register(config_path: Path, platform: str) -> str:
    """Install and register runsc; the line that says what was done.

    Raises:
        NotHere / Failed: as the exit codes say.
    """
    runsc = ensure_installed()
    entry = runtime_entry(runsc, platform)
    config = read_config(config_path)
    if (config.get("runtimes") or {}).get(RUNTIME) == entry and listed():
        return f"==> gVisor: runsc ({runsc}, --platform={platform}) is already registered with the engine"
    if os.geteuid() != 0:
        raise NotHere(f"registering runsc edits {config_path} and reloads the engine: run sudo make gvisor")
    pid = dockerd_pid()
    backup = write_config(config_path, merged(config, entry))
    os.kill(pid, signal.SIGHUP)  # dockerd reloads daemon.json's reloadable keys (runtimes among them)
    if not wait_listed():
        raise Failed(f"the engine does not list runsc {WAIT_SECONDS:g} s after reloading {config_path} "
                     f"(see dockerd's log; the earlier file is {backup or 'absent: none existed'})")
    kept = f", the earlier one kept as {backup}" if backup else ""
    return f"==> gVisor: runsc ({runsc}, --platform={platform}) registered in {config_path}{kept}; the engine lists it"


def main(argv: list[str] | None = None) -> int:
    """Install and register runsc; one line either way."""
    parser = argparse.ArgumentParser(prog="make gvisor", description=__doc__.splitlines()[0])
    parser.add_argument("--platform", default=os.environ.get("GVISOR_PLATFORM") or "ptrace", choices=PLATFORMS,
                        help="gVisor's platform (ptrace works everywhere; systrap or kvm where supported)")
    parser.add_argument("--config", type=Path, default=DAEMON_JSON, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        print(register(args.config, args.platform))
    except NotHere as exc:
        print(f"==> gVisor not set up: {exc}", file=sys.stderr)
        return 2
    except Failed as exc:
        print(f"==> gVisor not set up: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
