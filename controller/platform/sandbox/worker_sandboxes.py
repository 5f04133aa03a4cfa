"""The workers' warm sandboxes: one engine connection and warm containers handed to runs (issue 32).

A run's process builds its own Docker backend, and its own warm pool warms its first
container only when the run prewarms, so every run's first execution used to wait for a
container's start and its imports. The service's workers instead keep, for the service's
life, one engine connection and a pool (:class:`~controller.platform.sandbox.offering.OfferingSandbox`)
of warm containers for each kind of a run's first execution: as many as
``SBX_PARALLEL_RUNS`` (the workers) times the executions of that kind a run makes (at most
:data:`MAX_HANDED_PER_RUN`):

1. **learn**: a run's process reports the warm key of its first prewarm, and how many
   executions of it it made, in its run folder (:mod:`controller.platform.sandbox.warm_offer`);
   after the run the worker reads it (bounded, validated) and from then on keeps containers
   warm for that key, for runs of the same kind and agent (at most :data:`MAX_KEYS` keys, the
   least recently seen dropped). The first run of a kind is therefore as before; the later
   ones are handed warm containers.
2. **hand**: launching a run, the worker takes, per key of the run's kind and agent, as many
   idle containers as the last such run made executions of it (at most
   :data:`MAX_HANDED_PER_RUN`, never waiting) and names them in the run's environment; the
   run's backend attaches to one for each execution whose key equals theirs and uses it for
   that one execution, then removes it as any other. Handed as many as expected, the run
   warms none of its own for that key (an execution beyond them runs cold, and its own pool
   warms from then on); so no container is started for a run only to be removed unused at its
   end. A mismatch, a dead container or a failed attach: the run goes on as without.
3. **remove**: once the run's process ended, the worker removes every container it handed
   to that run (gone already if the run used it), so a run that died first leaves nothing;
   :meth:`WorkerSandboxes.close` removes the rest when the service stops; a service killed
   with ``-9`` leaves containers labelled with its pid, which the next run's reaper removes.

Each container still serves exactly one execution, created by the backend's one launch path
with the spec's limits, user, read-only root and no network. The warm fork parent
(:mod:`controller.runner.dispatch.launch`) holds none of this: the connection is opened in the
service process, lazily, when the first key is learned.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
import structlog

from agents.ports.errors import EngineUnavailable
from agents.ports.sandbox import SandboxSpec
from controller.platform.sandbox.engine import connect, require_runtime
from controller.platform.sandbox.labels import this_owner
from controller.platform.sandbox.offering import OfferingSandbox
from controller.platform.sandbox.pool import WarmContainer, WarmKey
from controller.platform.sandbox.removal import remove_now
from controller.platform.sandbox.warm_offer import (
    REPORT_FILE,
    Offer,
    WarmKeyModel,
    WarmOffer,
    read_report,
)
from controller.platform.settings import Settings

log = structlog.get_logger("sandloop.service")

#: Most kinds of first execution kept warm at once (the least recently seen is dropped).
MAX_KEYS = 4
#: Most containers of one kind handed to one run (an ICICI run makes two executions: the
#: statement probe and the parser).
MAX_HANDED_PER_RUN = 2
#: (run kind, agent, warm key): whose runs a kind of warm container is for.
Entry = tuple[str, str, WarmKey]


def per_run(executions: int) -> int:
    """Containers of a kind handed to a run whose predecessor made ``executions`` of it."""
    return min(max(1, executions), MAX_HANDED_PER_RUN)


def wanted(settings: Settings) -> bool:
    """Whether the settings ask for the workers' warm sandboxes (Docker, pool on, the setting on)."""
    return settings.service.warm_sandboxes and settings.sandbox_backend == "docker" and settings.pool.enabled


class WorkerSandboxes:
    """Warm containers on one engine connection, handed to runs' processes (see the module docstring)."""

    def __init__(self, settings: Settings, size: int,
                 connection: Callable[[], docker.DockerClient] = connect) -> None:
        """``size`` warm containers per key (the number of workers); ``connection`` opens the engine's."""
        self._settings = settings
        self.size = size
        self._connection = connection
        self._lock = threading.Lock()
        self._client: docker.DockerClient | None = None
        self._backend: OfferingSandbox | None = None
        self._closed = False
        #: The spec of each kind kept warm and how many executions of it the last such run made.
        self._keys: OrderedDict[Entry, tuple[SandboxSpec, int]] = OrderedDict()
        self._handed: dict[str, list[WarmContainer]] = {}
        #: Containers handed to runs, and those the runs reported they took.
        self.handed = self.taken = 0

    # the worker's calls ---------------------------------------------------------------------
    def hand_to(self, run_id: str, kind: str, agent: str, run_dir: Path) -> str:
        """The run's :data:`~controller.platform.sandbox.warm_offer.OFFER_ENV`: where to report, and
        idle warm containers for runs like it (none if none is idle now). Whatever happens here,
        what was taken from the pool is the run's, removed by :meth:`after_run` or :meth:`close`."""
        boxes: list[WarmContainer] = []
        offers: list[Offer] = []
        with self._lock:
            backend = self._backend
            kinds = [kept for (k, a, _), kept in self._keys.items() if (k, a) == (kind, agent)]
            self._handed[run_id] = boxes
        report = run_dir / REPORT_FILE
        report.unlink(missing_ok=True)  # an earlier attempt's (a resumed run reports again)
        for spec, executions in kinds if backend is not None else []:
            assert backend is not None
            key = WarmKeyModel.of(spec)
            for _ in range(per_run(executions) if key is not None else 0):
                box = backend.hand_out(spec)
                if box is None or key is None:
                    break
                with self._lock:
                    boxes.append(box)
                    self.handed += 1
                offers.append(Offer(container=str(box.container.id), volume=str(box.volume.name),
                                    warmup_seconds=round(box.warmup_seconds, 6), key=key, expected=executions))
        if offers:
            log.info("service.warm_sandbox_handed", run_id=run_id, containers=[o.container[:12] for o in offers])
        return WarmOffer(report=str(report), offers=offers).model_dump_json()

    def after_run(self, run_id: str, kind: str, agent: str, run_dir: Path) -> None:
        """The run's process ended: remove what it was handed, learn the key it reported."""
        with self._lock:
            boxes = self._handed.pop(run_id, [])
        for box in boxes:
            remove_now(box.container, box.volume)  # NotFound (the run used and removed it) is fine
        report = read_report(run_dir / REPORT_FILE)
        if report is None:
            return
        taken = {box.container.id for box in boxes} & set(report.taken)
        with self._lock:
            self.taken += len(taken)
        if report.key is not None:
            self.learn(kind, agent, report.key, report.executions)

    def learn(self, kind: str, agent: str, key: WarmKeyModel, executions: int = 1) -> None:
        """Keep containers warm for ``key``, for runs of ``kind`` and ``agent``: ``size`` (the
        workers) times the executions of it such a run makes (``executions``, at most
        :data:`MAX_HANDED_PER_RUN`)."""
        try:
            spec = key.spec()
        except ValueError as exc:
            log.warning("service.warm_sandbox_refused", agent=agent, reason=str(exc)[:200])
            return
        entry = (kind, agent, key.warm_key())
        executions = max(1, executions)
        with self._lock:
            if self._closed:
                return
            known = entry in self._keys
            if known:
                self._keys.move_to_end(entry)
        if not known:
            backend = self._start()
            if backend is None or not self._image_exists(spec.image):
                return
        with self._lock:
            backend = self._backend
            self._keys[entry] = (spec, executions)
            dropped = []
            while len(self._keys) > MAX_KEYS:
                old, (old_spec, _) = self._keys.popitem(last=False)
                if all(e[2] != old[2] for e in self._keys):
                    dropped.append(old_spec)
            size = self.size * max(per_run(n) for e, (_, n) in self._keys.items() if e[2] == entry[2])
        if backend is None or backend.pool is None:
            return
        backend.pool.want(spec, size=size)
        for old_spec in dropped:
            backend.pool.forget(old_spec)
        if not known:
            log.info("service.warm_sandboxes_kept", kind=kind, agent=agent, image=spec.image, size=size)

    def idle(self) -> int:
        """Warm containers idle now (tests, metrics)."""
        backend = self._backend
        return backend.pool.idle_count() if backend is not None and backend.pool is not None else 0

    def close(self) -> None:
        """Remove every warm container, handed or not, and close the engine connection."""
        with self._lock:
            self._closed = True
            backend, client = self._backend, self._client
            leftovers = [box for boxes in self._handed.values() for box in boxes]
            self._handed.clear()
        for box in leftovers:
            remove_now(box.container, box.volume)
        if backend is not None:
            backend.close()
        if client is not None:
            client.close()
        log.info("service.warm_sandboxes_closed", handed=self.handed, taken=self.taken)

    # the engine -----------------------------------------------------------------------------
    def _start(self) -> OfferingSandbox | None:
        """The backend on the service's one engine connection, opened at the first call."""
        with self._lock:
            if self._backend is not None or self._closed:
                return self._backend
            try:
                self._client = self._connection()
                require_runtime(self._client, self._settings.sandbox_runtime)
            except EngineUnavailable as exc:
                log.warning("service.warm_sandboxes_off", reason=exc.one_line())
                self._closed = True
                return None
            pool = self._settings.pool
            self._backend = OfferingSandbox(self._client, user=self._settings.sandbox_user, owner=this_owner(),
                                          pool_size=self.size, pool_max_idle_seconds=pool.max_idle_seconds,
                                          runtime=self._settings.sandbox_runtime)
            return self._backend

    def _image_exists(self, image: str) -> bool:
        client = self._client
        try:
            if client is not None:
                client.images.get(image)
                return True
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            log.warning("service.warm_sandbox_refused", image=image, reason=str(exc)[:200])
        return False
