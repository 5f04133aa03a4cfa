"""Warm containers handed from the service's workers to a run's process (issue 32).

The service's workers keep warm containers (:mod:`controller.platform.sandbox.worker_sandboxes`) on
one engine connection for the life of the service. Two small JSON documents carry what the
two sides must tell each other, both parsed with bounds and validated, anything else ignored:

* **the offer** (worker → run), in the run's environment variable :data:`OFFER_ENV`: the
  report file's path and up to :data:`MAX_OFFERS` started warm containers (id, volume name,
  the :class:`WarmKeyModel` they were made for). The run's Docker backend uses one for its
  first execution whose :class:`~controller.platform.sandbox.pool.WarmKey` equals the offer's
  (:meth:`controller.platform.sandbox.docker.DockerSandbox.run`); a mismatch, a dead
  container or a failed attach is logged once and the run goes on as without an offer.
* **the report** (run → worker), the file :data:`REPORT_FILE` in the run's folder: the warm
  key of the run's first prewarm (image, warm command, limits, environment, outputs to
  collect: never inputs, and a sandbox's environment holds no secrets, see
  :class:`~agents.ports.sandbox.SandboxSpec`) and the containers it took. The worker reads it
  after the run and from then on keeps containers warm for that key.

Neither side executes anything the other wrote: an offer names containers, a key is turned
into a :class:`SandboxSpec` by the same validation as any spec and created by the backend's
one ``_launch`` code path, with every guarantee of a cold container.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Annotated

import structlog
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from agents.ports.artefacts import write_atomic
from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.pool import WarmKey

log = structlog.get_logger("sandloop.sandbox")

#: The run process's environment variable that carries the offer (a JSON object).
OFFER_ENV = "SBX_WARM_OFFER"
#: The report's name in the run's folder.
REPORT_FILE = "sandbox-warm.json"
#: Most bytes of an offer or a report; more is ignored unread.
MAX_DOCUMENT_BYTES = 64 * 1024
#: Most containers offered to one run.
MAX_OFFERS = 8

_Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
_Name = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.=+-]*$")]
_EnvValue = Annotated[str, StringConstraints(max_length=4096)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WarmKeyModel(_Strict):
    """A warm key as JSON: what a warm container is made for (no inputs, no labels)."""

    image: Annotated[str, StringConstraints(min_length=1, max_length=255,
                                            pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")]
    warm_command: Annotated[list[_Text], Field(min_length=1, max_length=64)]
    limits: SandboxLimits
    env: Annotated[dict[_Name, _EnvValue], Field(max_length=64)] = {}
    collect: Annotated[list[_Name], Field(max_length=64)] = []

    @classmethod
    def of(cls, spec: SandboxSpec) -> WarmKeyModel | None:
        """The key of ``spec``, or None when it has no warm command (or does not fit the bounds)."""
        if spec.warm_command is None:
            return None
        try:
            return cls(image=spec.image, warm_command=list(spec.warm_command), limits=spec.limits,
                       env=dict(spec.env), collect=list(spec.collect))
        except ValidationError:
            return None

    def spec(self) -> SandboxSpec:
        """A spec with this key and no inputs, for launching warm containers.

        Raises:
            ValueError: the spec's own checks refuse it (a file name, an environment name
                that looks like a secret).
        """
        command = tuple(self.warm_command)
        return SandboxSpec(image=self.image, command=command, warm_command=command, limits=self.limits,
                           env=dict(self.env), collect=tuple(self.collect))

    def warm_key(self) -> WarmKey:
        """The pool's key for containers like these."""
        return WarmKey(self.image, tuple(self.warm_command), self.limits.model_dump_json(),
                       tuple(sorted(self.env.items())), tuple(self.collect))


class Offer(_Strict):
    """One started warm container handed to a run."""

    container: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12,64}$")]
    volume: Annotated[str, StringConstraints(pattern=r"^sandloop-[0-9a-f]{12}$")]
    warmup_seconds: float = Field(0.0, ge=0, le=3600)
    key: WarmKeyModel
    #: Executions of this key the worker expects of the run (its last run of the kind made as
    #: many): handed at least as many containers, the run warms none of its own for the key.
    expected: int = Field(1, ge=1, le=1_000_000)


class WarmOffer(_Strict):
    """The offer: where to report, and the containers handed to this run."""

    report: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = None
    offers: Annotated[list[Offer], Field(max_length=MAX_OFFERS)] = []


class Report(_Strict):
    """What a run tells the worker: its first warm key, how many executions it made of that key,
    and the handed containers it took."""

    key: WarmKeyModel | None = None
    executions: int = Field(0, ge=0, le=1_000_000)
    taken: Annotated[list[Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12,64}$")]],
                     Field(max_length=64)] = []


def parse_offer(text: str | None) -> WarmOffer | None:
    """The offer in ``text`` (the environment variable's value), or None if absent or invalid."""
    if not text:
        return None
    if len(text) > MAX_DOCUMENT_BYTES:
        log.warning("sandbox.offer_ignored", reason=f"the offer is longer than {MAX_DOCUMENT_BYTES} bytes")
        return None
    try:
        return WarmOffer.model_validate_json(text)
    except ValidationError as exc:
        log.warning("sandbox.offer_ignored", reason=f"invalid offer ({exc.error_count()} error(s))")
        return None


def take_offer() -> WarmOffer | None:
    """The offer this process was started with, removed from its environment (its children get none)."""
    return parse_offer(os.environ.pop(OFFER_ENV, None))


def read_report(path: Path) -> Report | None:
    """The run's report at ``path``, or None if missing, too large or invalid."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_DOCUMENT_BYTES:
        log.warning("sandbox.report_ignored", path=str(path), reason="too large")
        return None
    try:
        return Report.model_validate_json(data)
    except ValidationError as exc:
        log.warning("sandbox.report_ignored", path=str(path), reason=f"invalid ({exc.error_count()} error(s))")
        return None


def write_report(path: Path, report: Report) -> None:
    """Write ``report`` to ``path`` (whole or not at all); a failure is logged, never raised."""
    try:
        write_atomic(path, json.dumps(report.model_dump(mode="json"), sort_keys=True))
    except OSError as exc:
        log.warning("sandbox.report_failed", path=str(path), error=str(exc)[:200])


class OfferedContainers:
    """A run's side of its worker's offer: the containers offered, by warm key, and the report the
    worker reads after the run (the first warm key, how many executions of it, what was taken).

    The Docker backend asks it for an offered container before it runs cold or warms its own;
    attaching to the container stays the backend's. Thread-safe: a run's executions may overlap.
    """

    def __init__(self, offer: WarmOffer | None) -> None:
        self._lock = threading.Lock()
        self._offers: dict[WarmKey, list[Offer]] = {}
        for offered in offer.offers if offer is not None else []:
            self._offers.setdefault(offered.key.warm_key(), []).append(offered)
        self._path = Path(offer.report) if offer is not None and offer.report else None
        self._reported: Report | None = None

    def take(self, key: WarmKey) -> Offer | None:
        """The next container offered for ``key`` (removed from the offer), or None."""
        with self._lock:
            offers = self._offers.get(key)
            return offers.pop(0) if offers else None

    def taken(self, container_id: str) -> None:
        """Report that the run attached to ``container_id`` (the worker does not remove it twice)."""
        with self._lock:
            if self._path is None:
                return
            report = self._reported or Report()
            self._write(self._path, report.model_copy(update={"taken": [*report.taken, container_id][-64:]}))

    def count(self, spec: SandboxSpec) -> None:
        """One more execution of the reported key (the worker offers as many containers next time)."""
        with self._lock:
            report = self._reported
            if self._path is None or report is None or report.key is None:
                return
            if report.key.warm_key() != WarmKey.of(spec):
                return
            self._write(self._path, report.model_copy(update={"executions": report.executions + 1}))

    def first_warm(self, spec: SandboxSpec) -> list[Offer]:
        """Report ``spec``'s warm key if it is the run's first; the containers still offered for it."""
        key = WarmKeyModel.of(spec)
        with self._lock:
            if self._path is not None and self._reported is None and key is not None:
                self._write(self._path, Report(key=key))
            return list(self._offers.get(key.warm_key(), [])) if key is not None else []

    def _write(self, path: Path, report: Report) -> None:
        self._reported = report
        write_report(path, report)
