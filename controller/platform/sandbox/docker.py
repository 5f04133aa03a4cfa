"""The Docker backend: one fresh, locked-down container per execution, always removed.

Guarantees, all on by default and none of them optional:

* every container under the configured OCI runtime (``runc``, or gVisor's ``runsc``: a
  user-space kernel between the program and the host's; docs/sandbox.md);
* no network (``network_mode="none"``), a numeric non-root user, every capability dropped,
  ``no-new-privileges``, a read-only root filesystem;
* writable space only in a size-limited ``noexec`` tmpfs at ``/tmp`` and under ``/work/out``,
  which lives in a fresh tmpfs-backed volume at ``/work`` of ``output_area_mb`` MiB: the
  kernel bounds what a sandbox can write there, and none of it touches the host's disk;
* memory limit with swap equal to it (no extra swap), CPU quota, pids limit, open-file
  limit, a wall-clock timeout that kills, and stdout/stderr capped at the source (no log
  driver: output is streamed from the container and counted, never stored by the engine);
* files go in and out over the one attach connection (works with a remote engine, costs no
  engine call): the holder (:mod:`controller.platform.sandbox.holder`, PID 1) unpacks the inputs'
  archive from stdin and, once the program ended and every other process in the sandbox
  was killed, sends the outputs back as frames, one regular file per name, decoded with
  bounded memory (:mod:`controller.platform.sandbox.outputs`);
* the container and its volume are removed after every execution, whatever happened: in
  the background once the result is read (:mod:`controller.platform.sandbox.removal`, drained by
  :meth:`DockerSandbox.close`); leftovers of controllers that died are reaped at start
  (:mod:`controller.platform.sandbox.reaper`).

The lifecycle of one execution (cold or warm, see docs/architecture.md): volume and
container created, attached (stdin, stdout, stderr on one connection), started (the holder
waits); hand over = the go line and the inputs' archive on stdin (inputs read-only, ``out/``
for the program); run = wait for the holder's end marker; collect = the output frames that
follow it; remove = in the background.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import tarfile
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import docker
import docker.errors
import requests.exceptions
import structlog

# _create_container_args: docker-py's own translation of containers.create's keywords; private, so not in its stubs.
from docker.models.containers import Container, _create_container_args  # type: ignore[attr-defined]
from docker.types import LogConfig, Mount, Ulimit

from agents.ports.errors import SandboxError
from agents.ports.sandbox import (
    GO_FILE,
    INPUT_DIR,
    OUTPUT_DIR,
    SCRATCH_DIR,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
)
from controller.platform.sandbox.faults import KILLED_FROM_OUTSIDE, engine_fault, lost_container
from controller.platform.sandbox.holder import held
from controller.platform.sandbox.labels import managed_labels
from controller.platform.sandbox.outputs import Collected, OutputFrames
from controller.platform.sandbox.pool import WarmContainer, WarmKey, WarmPool
from controller.platform.sandbox.removal import Remover, remove_now
from controller.platform.sandbox.session import AttachedSession
from controller.platform.sandbox.trace import ExecutionTrace, RoundTrips
from controller.platform.sandbox.warm_offer import Offer, OfferedContainers, WarmOffer
from controller.platform.stop import POLL_SECONDS, PROCESS, Stopped, StopSwitch

WORK_DIR = "/work"
GO_NAME = GO_FILE.rsplit("/", 1)[-1]
_MiB = 1 << 20
#: Exit statuses above this mean "killed by a signal": worth asking the engine about OOM.
_SIGNALLED = 128
#: Bytes of the /work area kept free of inputs (tar framing, folders).
_AREA_SLACK = 64 * 1024
_ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
#: Seconds to wait for the holder's output frames once the program ended (they are local
#: tmpfs reads; only a holder that was stopped by its program takes longer).
_COLLECT_SECONDS = 30.0
#: Seconds the engine gets to record an OOM kill of a sandbox that ended whole (:func:`_settled`).
_OOM_SETTLE_SECONDS = 2.0

log = structlog.get_logger("sandloop.sandbox")


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
        remove_in_background: bool = False,
        offer: WarmOffer | None = None,
        stop: StopSwitch = PROCESS,
        runtime: str = "runc",
    ) -> None:
        """Create a backend.

        Args:
            client: A connected Docker client.
            user: ``uid:gid`` the sandboxed program runs as (never 0).
            owner: Identifies this controller process in labels, for reaping leftovers.
            pool_size: Warm containers kept per kind of execution; 0 turns the pool off.
            pool_max_idle_seconds: A warm container idle this long is removed.
            remove_in_background: Remove used containers off the critical path; the owner
                must then call :meth:`close` (which drains the removals). Off, each
                execution removes its container before it returns.
            offer: Warm containers the service's worker handed to this process, and where
                to report the first warm key (:mod:`controller.platform.sandbox.warm_offer`).
            stop: The process's stop switch: once thrown, a running execution's container is
                killed within :data:`~controller.platform.stop.POLL_SECONDS` and none starts.
            runtime: The engine's OCI runtime every container of this backend runs under
                (``runc``, or ``runsc``: gVisor); the caller made sure the engine lists it.
        """
        self._stop = stop
        self._client = client
        self._user = user
        self._owner = owner
        self.runtime = runtime
        self._round_trips = RoundTrips(client)
        self._remover = Remover()
        if not remove_in_background:
            self._remover.close()  # a closed remover removes inline
        self._local = threading.local()
        self._offered = OfferedContainers(offer)
        self.pool: WarmPool | None = None
        if pool_size > 0:
            self.pool = WarmPool(self._launch_warm, self._discard, size=pool_size,
                                 max_idle_seconds=pool_max_idle_seconds)

    @property
    def last_trace(self) -> ExecutionTrace | None:
        """Phases and round trips of this thread's last execution (for the benchmark)."""
        return getattr(self._local, "trace", None)

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Execute ``spec`` in a throwaway container (warm if one waits) and return what happened."""
        trace = ExecutionTrace()
        with self._round_trips.recording() as calls:
            try:
                return self._run(spec, trace)
            finally:
                trace.round_trips = list(calls)
                self._local.trace = trace
                log.debug("sandbox.trace", image=spec.image, **trace.fields())

    def _run(self, spec: SandboxSpec, trace: ExecutionTrace) -> SandboxResult:
        self._stop.check()  # told to stop: nothing new starts (a retry of a lost execution neither)
        _check_inputs_fit(spec)
        self._offered.count(spec)
        box: WarmContainer | None = None
        try:
            with trace.phase("take"):
                box = self._take_handed(spec)
                trace.handed = box is not None
                box = box or self._take_warm(spec)
            trace.warm = box is not None
            if box is None:
                with trace.phase("start"):
                    box = self._launch(spec, spec.command, waits_itself=False, labels=spec.labels)
            else:
                trace.phases["refill"] = box.warmup_seconds
                if box.session is not None and box.session.ready_at is not None:
                    trace.phases["ready"] = box.session.ready_at - (box.ready_at - box.warmup_seconds)
            result = self._execute(box, spec, trace)
            return dataclasses.replace(result, warmup_seconds=box.warmup_seconds) if trace.warm else result
        except _ENGINE_ERRORS as exc:  # the container, the image or the engine went away: retried
            raise engine_fault(spec.image, exc) from exc
        finally:
            if box is not None:
                with trace.phase("remove"):
                    self._release(box)

    def _take_handed(self, spec: SandboxSpec) -> WarmContainer | None:
        """The container the service's worker handed over for executions like ``spec``, attached;
        None if there is none (or it is dead, or the attach failed: logged, then run as without)."""
        key = WarmKey.of(spec)
        while key is not None:
            offer = self._offered.take(key)
            if offer is None:
                return None
            box = self._adopt(offer, spec)
            if box is not None:
                return box
        return None

    def _adopt(self, offer: Offer, spec: SandboxSpec) -> WarmContainer | None:
        """Attach to a handed container (None if it is not running or the attach failed)."""
        started = time.monotonic()
        try:
            state = self._client.api.inspect_container(offer.container).get("State") or {}
            if not state.get("Running"):
                raise _NotUsable(f"it is {state.get('Status', 'not running')}")
            session = AttachedSession(self._client.api, offer.container, spec.limits.output_bytes,
                                      OutputFrames(spec.collect, spec.limits.collect_bytes))
        except (*_ENGINE_ERRORS, _NotUsable) as exc:  # the worker removes it after the run
            log.warning("sandbox.offer_ignored", container=offer.container[:12], reason=str(exc)[:200])
            return None
        self._offered.taken(offer.container)
        container = self._client.containers.prepare_model({"Id": offer.container})
        volume = self._client.volumes.prepare_model({"Name": offer.volume})
        now = time.monotonic()
        return WarmContainer(container, volume, ready_at=now, warmup_seconds=offer.warmup_seconds + now - started,
                             session=session)

    def _attach_stdin(self, waits_itself: bool) -> bool:
        """Whether a new container is attached with stdin (its go line comes through it)."""
        return True

    def _take_warm(self, spec: SandboxSpec) -> WarmContainer | None:
        """A warm container still waiting for work, or None to run cold."""
        warm = self.pool.acquire(spec) if self.pool is not None else None
        if warm is None:
            return None
        if warm.session is not None and not warm.session.ended:
            return warm
        self._discard(warm)  # it died while waiting (killed, engine restart): never reuse it
        return None

    def prewarm(self, spec: SandboxSpec) -> None:
        """Start warming containers for executions like ``spec`` before the first one; the first
        one's warm key is reported to the service's worker, if this process has one."""
        offers = self._offered.first_warm(spec)
        # Handed as many containers as the worker expects executions of this kind: no own warming
        # (an execution beyond them runs cold, and the pool warms for the next from then on).
        if self.pool is not None and (not offers or len(offers) < offers[0].expected):
            self.pool.want(spec)

    def wait_warm(self, timeout: float) -> bool:
        """Wait until a warm container is idle *and ready* (its imports done); False on timeout.

        For the benchmark and tests: a started container is not yet a warm one.
        """
        deadline = time.monotonic() + timeout
        while self.pool is not None and time.monotonic() < deadline:
            if any(w.session is not None and w.session.ready for w in self.pool.idle_containers()):
                return True
            time.sleep(0.01)
        return False

    def close(self) -> None:
        """Remove the warm containers and finish every pending removal; later runs are cold."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self._remover.close()

    def drain_removals(self) -> None:
        """Wait until every used container and volume is removed (tests, benchmark)."""
        self._remover.drain()

    @property
    def removal_seconds(self) -> list[float]:
        """How long each background removal took (the benchmark's breakdown)."""
        return list(self._remover.durations)

    def _launch_warm(self, spec: SandboxSpec) -> WarmContainer:
        """A started container running ``spec.warm_command`` under the holder, waiting for its go line."""
        return self._launch(spec, spec.warm_command or spec.command, waits_itself=spec.warm_command is not None,
                            labels={"pool": "warm"})

    def _launch(
        self, spec: SandboxSpec, command: tuple[str, ...], *, waits_itself: bool, labels: Mapping[str, str]
    ) -> WarmContainer:
        """Create the volume and the container, attach, start: the holder then waits for the go line."""
        started = time.monotonic()
        name = f"sandloop-{uuid.uuid4().hex[:12]}"
        all_labels = managed_labels(self._owner, labels)
        volume = self._client.volumes.create(
            name=name, driver="local", driver_opts=_area_options(spec.limits, self._user), labels=all_labels)
        container = session = None
        try:
            argv = held(command, waits_itself=waits_itself, collect=spec.collect, cap=spec.limits.collect_bytes)
            container = self._create(spec, argv, name, all_labels)
            session = AttachedSession(self._client.api, container.id or name, spec.limits.output_bytes,
                                      OutputFrames(spec.collect, spec.limits.collect_bytes),
                                      stdin=self._attach_stdin(waits_itself))
            container.start()
        except BaseException:
            if session is not None:
                session.close()
            remove_now(container, volume)
            raise
        now = time.monotonic()
        return WarmContainer(container, volume, ready_at=now, warmup_seconds=now - started, session=session)

    def _release(self, box: WarmContainer) -> None:
        """Queue the container and volume for removal, then drop the attach connection."""
        self._remover.submit(box.container, box.volume)
        if box.session is not None:
            box.session.close()

    def _discard(self, warm: WarmContainer) -> None:
        if warm.session is not None:
            warm.session.close()
        remove_now(warm.container, warm.volume)

    def _create(
        self, spec: SandboxSpec, command: list[str], name: str, labels: Mapping[str, str]
    ) -> Container:
        limits = spec.limits
        return self._create_quietly(
            image=spec.image,
            command=command,
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
                SCRATCH_DIR: f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777,{_owned_by(self._user)}"
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
            runtime=self.runtime,
            stdin_open=True,
            tty=False,
        )

    def _create_quietly(self, **kwargs: Any) -> Container:
        """``containers.create`` without the inspect that follows it: one engine call, not two."""
        kwargs["version"] = self._client.api.api_version
        created = self._client.api.create_container(**_create_container_args(kwargs))
        return self._client.containers.prepare_model({"Id": created["Id"]})

    def _execute(self, box: WarmContainer, spec: SandboxSpec, trace: ExecutionTrace) -> SandboxResult:
        """Hand over, wait for the end marker (or the timeout), collect while the holder holds."""
        session = box.session
        assert session is not None
        self._stop.check()  # stopped while the container was taken or started
        with trace.phase("hand over"):
            session.handover(_handover_archive(spec.inputs))
        started = time.monotonic()
        with trace.phase("run"):
            finished = self._wait(box, spec.limits.timeout_seconds)
        wall = time.monotonic() - started
        status = session.exit_status if finished else None
        with trace.phase("collect"):
            collected = self._collect(box, spec, status)
            exit_code, oom = self._final_state(box, finished, status)
        return SandboxResult(
            exit_code=exit_code,
            stdout=session.capture.stream("stdout"),
            stderr=session.capture.stream("stderr"),
            timed_out=not finished,
            oom_killed=oom,
            wall_seconds=wall,
            files=collected.files,
            container_id=box.container.id[:12],
            truncated_files=tuple(collected.too_big),
            warm=trace.warm,
            refused_files=collected.refused,
            pids_limited=session.pids_limited,
        )

    def _wait(self, box: WarmContainer, timeout: float) -> bool:
        """Wait for the program's end (True) or the timeout (False), looking at the stop switch.

        Raises:
            Stopped: the process was told to stop; the container was killed (the caller's
                ``finally`` removes it). The wait is sliced because a signal interrupts only the
                main thread, and an execution may wait in another (``check``'s pool).
        """
        session = box.session
        assert session is not None
        deadline = time.monotonic() + timeout
        while not session.wait(max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))):
            if self._stop.stopped:
                _kill_quietly(box.container)
                raise Stopped(self._stop.reason)
            if time.monotonic() >= deadline:
                return False
        return True

    def _collect(self, box: WarmContainer, spec: SandboxSpec, status: int | None) -> Collected:
        if not spec.collect:
            return Collected()
        if status is None:  # timed out, or the holder is gone: the tmpfs went with it
            return Collected.none_read(spec.collect)
        return _collect(box.session)

    def _final_state(self, box: WarmContainer, finished: bool, status: int | None) -> tuple[int | None, bool]:
        """(exit code, OOM-killed). Asks the engine only when the marker does not settle it.

        Raises:
            InfraFault: the output ended early because the engine removed or killed the container.
        """
        cut = box.session is not None and box.session.cut_short
        if not finished:
            return None, False
        if status is not None and status < _SIGNALLED and not cut:
            return status, False
        container = box.container
        if status is not None and not cut:
            with contextlib.suppress(docker.errors.APIError):  # it ended on its own meanwhile
                container.kill()  # a signalled child: let the engine record the container's end
        container.wait(timeout=30)
        container.reload()
        state = container.attrs.get("State", {})
        if cut:
            state = _settled(container, state)
        lost = lost_container(state) if cut else None
        if lost is not None:
            raise lost
        code = status if status is not None else state.get("ExitCode")
        return code, bool(state.get("OOMKilled"))


def _settled(container: Container, state: Mapping[str, Any]) -> Mapping[str, Any]:
    """The container's end state once the engine had time to record an OOM kill.

    A sandbox killed whole (gVisor's: the memory limit's OOM kill takes its kernel, so the holder
    too) ends before the engine processed the OOM event: for a moment its state says exit 137,
    not OOM-killed, which reads as "killed from outside" and would be retried as the engine's
    fault. Asked again for up to :data:`_OOM_SETTLE_SECONDS`; only on this path (a cut stream
    ending in SIGKILL), so no other execution waits.
    """
    deadline = time.monotonic() + _OOM_SETTLE_SECONDS
    while (not state.get("OOMKilled") and state.get("ExitCode") in KILLED_FROM_OUTSIDE
           and time.monotonic() < deadline):
        time.sleep(0.1)
        container.reload()
        state = container.attrs.get("State", {})
    return state


def _kill_quietly(container: Container) -> None:
    """Kill a container now (its removal follows); one already gone is what was wanted."""
    try:
        container.kill()
    except _ENGINE_ERRORS as exc:
        log.debug("sandbox.kill_failed", container=(container.id or "")[:12], error=str(exc)[:200])


class _NotUsable(Exception):
    """A handed container that cannot serve the execution."""


def _collect(session: AttachedSession) -> Collected:
    """The holder's output frames (a module-level seam, so a test can make collection fail)."""
    return session.outputs(_COLLECT_SECONDS)


def _area_options(limits: SandboxLimits, user: str) -> dict[str, str]:
    """``local`` volume options: a tmpfs of ``output_area_mb``, not executable, owned by the
    sandbox user (the holder, which runs as that user, unpacks the inputs into it)."""
    return {
        "type": "tmpfs",
        "device": "tmpfs",
        "o": f"size={limits.output_area_mb}m,nr_inodes=16384,mode=0755,{_owned_by(user)},noexec,nosuid,nodev",
    }


def _owned_by(user: str) -> str:
    """The tmpfs mount options that make ``uid:gid`` the owner of its root."""
    uid, _, gid = user.partition(":")
    return f"uid={int(uid)},gid={int(gid)}"


def _check_inputs_fit(spec: SandboxSpec) -> None:
    size = sum(len(data) for data in spec.inputs.values()) + _AREA_SLACK
    if size > spec.limits.output_area_mb * _MiB:
        raise SandboxError(
            f"the inputs ({size // _MiB + 1} MiB) do not fit the sandbox's {spec.limits.output_area_mb} MiB /work area",
            hint="raise SBX_SANDBOX__OUTPUT_AREA_MB",
        )


def _handover_archive(inputs: Mapping[str, bytes]) -> bytes:
    """``in/`` (read-only files in a read-only folder), an empty ``out/``, and the go file last.

    The holder unpacks it as the sandbox user, so the modes are what keeps the inputs
    read-only: the program owns its copy of them and could change only that copy.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(_dir_entry("out", 0o755))
        tar.addfile(_dir_entry("in", 0o555))
        for name, data in {**inputs, GO_NAME: b""}.items():
            info = tarfile.TarInfo(f"in/{name}")
            info.size, info.mode = len(data), 0o444
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _dir_entry(name: str, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, mode
    return info


__all__ = ["DockerSandbox", "INPUT_DIR", "OUTPUT_DIR"]
