"""The Docker backend: one fresh, locked-down container per execution, always removed.

Guarantees, all on by default and none of them optional:

* no network (``network_mode="none"``), a numeric non-root user, every capability dropped,
  ``no-new-privileges``, a read-only root filesystem;
* writable space only in a size-limited ``noexec`` tmpfs at ``/tmp`` and in ``/work/out``
  (a fresh volume that dies with the container; files there are bounded by RLIMIT_FSIZE);
* memory limit with swap equal to it (no extra swap), CPU quota, pids limit, open-file
  limit, a wall-clock timeout that kills, and stdout/stderr capped at the source (no log
  driver: output is streamed from the container and counted, never stored by the engine);
* files go in and out through the engine's archive API (works with a remote engine), and
  only regular files are read back, by name, with a size cap;
* the container and its volume are removed in ``finally``: on success, failure, timeout,
  exception or Ctrl-C. Leftovers of controllers that died are reaped at start
  (:mod:`controller.sandbox.reaper`).
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from docker.types import LogConfig, Mount, Ulimit

from controller.errors import SandboxError
from controller.sandbox.labels import managed_labels
from controller.sandbox.pool import WarmContainer, WarmPool
from controller.sandbox.spec import (
    GO_FILE,
    INPUT_DIR,
    OUTPUT_DIR,
    SCRATCH_DIR,
    CapturedStream,
    SandboxResult,
    SandboxSpec,
)

WORK_DIR = "/work"
GO_NAME = GO_FILE.rsplit("/", 1)[-1]
_MiB = 1 << 20


@dataclass
class _StreamCapture:
    """Keeps the first ``limit`` bytes of each stream and counts the rest."""

    limit: int

    def __post_init__(self) -> None:
        self.buffers = {"stdout": bytearray(), "stderr": bytearray()}
        self.totals = {"stdout": 0, "stderr": 0}

    def feed(self, name: str, chunk: bytes | None) -> None:
        if not chunk:
            return
        self.totals[name] += len(chunk)
        room = self.limit - len(self.buffers[name])
        if room > 0:
            self.buffers[name] += chunk[:room]

    def stream(self, name: str) -> CapturedStream:
        return CapturedStream(bytes(self.buffers[name]), self.totals[name])


class DockerSandbox:
    """Runs each :class:`SandboxSpec` in a new container on a Docker engine."""

    def __init__(
        self,
        client: docker.DockerClient,
        *,
        user: str,
        owner: str,
        pool_size: int = 0,
        pool_max_idle_seconds: float = 120.0,
    ) -> None:
        """Create a backend.

        Args:
            client: A connected Docker client.
            user: ``uid:gid`` the sandboxed program runs as (never 0).
            owner: Identifies this controller process in labels, for reaping leftovers.
            pool_size: Warm containers kept per kind of execution; 0 turns the pool off.
            pool_max_idle_seconds: A warm container idle this long is removed.
        """
        self._client = client
        self._user = user
        self._owner = owner
        self.pool: WarmPool | None = None
        if pool_size > 0:
            self.pool = WarmPool(self._launch_warm, _discard, size=pool_size,
                                 max_idle_seconds=pool_max_idle_seconds)

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Execute ``spec`` in a throwaway container (warm if one waits) and return what happened."""
        warm = self._take_warm(spec)
        volume = container = None
        try:
            if warm is not None:
                volume, container = warm.volume, warm.container
                result = self._execute(container, spec, handover=True)
                return dataclasses.replace(result, warmup_seconds=warm.warmup_seconds)
            name = f"sandloop-{uuid.uuid4().hex[:12]}"
            labels = managed_labels(self._owner, spec.labels)
            volume = self._client.volumes.create(name=name, labels=labels)
            container = self._create(spec, spec.command, name, labels)
            container.put_archive(WORK_DIR, _input_archive(spec.inputs, self._user))
            return self._execute(container, spec, handover=False)
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxError(f"the Docker engine failed running {spec.image}: {exc}") from exc
        finally:
            _remove(container, volume)

    def _take_warm(self, spec: SandboxSpec) -> WarmContainer | None:
        """A warm container still waiting for work, or None to run cold."""
        warm = self.pool.acquire(spec) if self.pool is not None else None
        if warm is None:
            return None
        try:
            warm.container.reload()
            if warm.container.status == "running":
                return warm
        except docker.errors.APIError:
            pass
        _discard(warm)  # it died while waiting (killed, engine restart): never reuse it
        return None

    def prewarm(self, spec: SandboxSpec) -> None:
        """Start warming containers for executions like ``spec`` before the first one."""
        if self.pool is not None:
            self.pool.want(spec)

    def close(self) -> None:
        """Remove the warm containers; the backend runs cold afterwards."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def _launch_warm(self, spec: SandboxSpec) -> WarmContainer:
        """Create and start a container running ``spec.warm_command``, waiting for its go file."""
        started = time.monotonic()
        name = f"sandloop-warm-{uuid.uuid4().hex[:12]}"
        labels = managed_labels(self._owner, {"pool": "warm"})
        volume = self._client.volumes.create(name=name, labels=labels)
        container = None
        try:
            container = self._create(spec, spec.warm_command or spec.command, name, labels)
            container.put_archive(WORK_DIR, _input_archive({}, self._user))
            container.start()
        except BaseException:
            _remove(container, volume)
            raise
        now = time.monotonic()
        return WarmContainer(container, volume, ready_at=now, warmup_seconds=now - started)

    def _create(
        self, spec: SandboxSpec, command: tuple[str, ...], name: str, labels: Mapping[str, str]
    ) -> Container:
        limits = spec.limits
        uid, _, gid = self._user.partition(":")
        return self._client.containers.create(
            spec.image,
            list(command),
            name=name,
            labels=dict(labels),
            user=self._user,
            environment=dict(spec.env),
            working_dir=SCRATCH_DIR,
            network_mode="none",
            network_disabled=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs={
                SCRATCH_DIR: f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777,uid={uid},gid={gid}"
            },
            mounts=[Mount(target=WORK_DIR, source=name, type="volume")],
            mem_limit=limits.memory_mb * _MiB,
            memswap_limit=limits.memory_mb * _MiB,
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            ulimits=[
                Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                Ulimit(name="fsize", soft=limits.file_size_mb * _MiB, hard=limits.file_size_mb * _MiB),
                Ulimit(name="core", soft=0, hard=0),
            ],
            log_config=LogConfig(type=LogConfig.types.NONE),
            ipc_mode="private",
            hostname="sandbox",
            stdin_open=False,
            tty=False,
        )

    def _execute(self, container: Container, spec: SandboxSpec, *, handover: bool) -> SandboxResult:
        """Run to the end (cold: start; warm: copy inputs in, then the go file) and collect."""
        capture = _StreamCapture(spec.limits.output_bytes)
        stream = self._client.api.attach(
            container.id, stdout=True, stderr=True, stream=True, logs=False, demux=True
        )
        reader = threading.Thread(target=_drain, args=(stream, capture), daemon=True)
        reader.start()
        started = time.monotonic()
        if handover:
            # One archive, go file last: the engine extracts in order, so the waiting
            # program sees the go file only once every input is complete.
            container.put_archive(WORK_DIR, _files_archive({**spec.inputs, GO_NAME: b""}))
        else:
            container.start()
        exit_code, timed_out = _wait(container, spec.limits.timeout_seconds)
        wall = time.monotonic() - started
        reader.join(timeout=5)
        container.reload()
        state = container.attrs.get("State", {})
        files, truncated = _collect(container, spec.collect, spec.limits.collect_bytes)
        return SandboxResult(
            exit_code=None if timed_out else state.get("ExitCode", exit_code),
            stdout=capture.stream("stdout"),
            stderr=capture.stream("stderr"),
            timed_out=timed_out,
            oom_killed=bool(state.get("OOMKilled")) and not timed_out,
            wall_seconds=wall,
            files=files,
            container_id=container.id[:12],
            truncated_files=truncated,
            warm=handover,
        )


def _drain(stream: Iterator[tuple[bytes | None, bytes | None]], capture: _StreamCapture) -> None:
    """Read the container's output to its end, so a chatty program never blocks on a pipe."""
    try:
        for out, err in stream:
            capture.feed("stdout", out)
            capture.feed("stderr", err)
    except (requests.exceptions.RequestException, OSError, ValueError):
        pass  # the stream ends when the container is killed or removed


def _wait(container: Container, timeout: float) -> tuple[int | None, bool]:
    """Wait for the container to exit; kill it at ``timeout`` seconds. Returns (code, timed_out)."""
    try:
        status = container.wait(timeout=timeout)
        return int(status.get("StatusCode", -1)), False
    except (requests.exceptions.ConnectionError, requests.exceptions.ReadTimeout):
        try:
            container.kill()
        except docker.errors.APIError:
            pass  # it exited between the timeout and the kill
        container.wait(timeout=30)
        return None, True


def _input_archive(inputs: Mapping[str, bytes], user: str) -> bytes:
    """A tar of ``in/<name>`` (read-only, root-owned) and an empty ``out/`` owned by ``user``."""
    uid, _, gid = user.partition(":")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(_dir_entry("in", 0, 0, 0o755))
        tar.addfile(_dir_entry("out", int(uid), int(gid), 0o755))
        _add_files(tar, inputs)
    return buffer.getvalue()


def _files_archive(inputs: Mapping[str, bytes]) -> bytes:
    """A tar of ``in/<name>`` only (the folders exist already)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _add_files(tar, inputs)
    return buffer.getvalue()


def _add_files(tar: tarfile.TarFile, inputs: Mapping[str, bytes]) -> None:
    for name, data in inputs.items():
        info = tarfile.TarInfo(f"in/{name}")
        info.size, info.mode, info.mtime = len(data), 0o444, int(time.time())
        tar.addfile(info, io.BytesIO(data))


def _dir_entry(name: str, uid: int, gid: int, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, mode, uid, gid, int(time.time())
    return info


def _collect(
    container: Container, names: tuple[str, ...], cap: int
) -> tuple[dict[str, bytes], tuple[str, ...]]:
    """Read back the regular files ``names`` from /work/out; skip what is missing or too big."""
    files: dict[str, bytes] = {}
    truncated: list[str] = []
    budget = cap
    for name in names:
        try:
            chunks, stat = container.get_archive(f"{OUTPUT_DIR}/{name}")
        except docker.errors.NotFound:
            continue
        if int(stat.get("size", 0)) > budget:
            truncated.append(name)
            continue
        data = _regular_file(b"".join(chunks), name)
        if data is not None:
            files[name] = data
            budget -= len(data)
    return files, tuple(truncated)


def _regular_file(archive: bytes, name: str) -> bytes | None:
    """The content of ``name`` if the archive holds it as a regular file (never a link)."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
        for member in tar.getmembers():
            if member.name == name and member.isfile():
                extracted = tar.extractfile(member)
                return extracted.read() if extracted else None
    return None


def _discard(warm: WarmContainer) -> None:
    _remove(warm.container, warm.volume)


def _remove(container: Container | None, volume: object | None) -> None:
    """Remove the container and its volume, whatever state they are in."""
    if container is not None:
        try:
            container.remove(force=True, v=True)
        except docker.errors.APIError:
            pass  # already gone, or the reaper removes it on the next start
    if volume is not None:
        try:
            volume.remove(force=True)  # type: ignore[attr-defined]
        except docker.errors.APIError:
            pass


__all__ = ["DockerSandbox", "INPUT_DIR", "OUTPUT_DIR"]
