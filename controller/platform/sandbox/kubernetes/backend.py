"""The Kubernetes backend: one fresh Pod (and input ConfigMap) per execution, always deleted.

The conversation with the API server, in order: create the ConfigMap (inputs), create the
Pod, read the Pod until it has ended (or cannot start), read the collector's log (and, for
diagnostics, the program container's) with ``limitBytes``, delete the Pod and the
ConfigMap. Verbs used: configmaps create/delete, pods create/get/delete, pods/log get (the
reaper adds list on both). No exec, no attach, no watch: the Role grants exactly these
(``deploy/k8s/base/rbac.yaml``, checked by the tests).

Ends and what they become:

* the program ran (any exit code): a :class:`SandboxResult` from the collector's frame;
* the program ran past its timeout (the in-Pod launcher kills it), the Pod passed
  ``activeDeadlineSeconds``, or the controller's own deadline passed: ``timed_out``;
* the program container was OOM-killed (``OOMKilled``, or an OOM kill the launcher saw): ``oom_killed``;
* the image cannot be pulled: :class:`SandboxImageUnavailable`; no node fits the Pod
  within ``startup_seconds``: :class:`SandboxUnschedulable`; the Pod was evicted for
  going over its own storage limits (an ``emptyDir`` over its ``sizeLimit``): a failed
  result saying so (the program's doing);
* the infrastructure lost the execution (:class:`~agents.ports.errors.InfraFault`, run again
  by :mod:`controller.platform.sandbox.retry`): the Pod evicted for the node's sake
  (``pod_evicted``: memory or disk pressure), its node shut down or stopped reporting, the
  Pod disrupted (preempted, drained) or gone while we waited (``pod_lost``), the API server
  unreachable or answering 429/5xx (``api_unreachable``).

Deletion runs in ``finally``: on success, failure, exception and Ctrl-C. A controller that
dies leaves objects labelled with their expiry, which :mod:`.reaper` removes.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from typing import Any

import urllib3.exceptions
from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException

from agents.ports.errors import InfraFault, SandboxError, first_line
from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.kubernetes.frame import Frame, decode_frame
from controller.platform.sandbox.kubernetes.podspec import (
    COLLECTOR,
    PROGRAM,
    input_configmap,
    now,
    pod_deadline_seconds,
    pod_labels,
    sandbox_pod,
)
from controller.platform.sandbox.kubernetes.status import Verdict, read_verdict
from controller.platform.stop import PROCESS, StopSwitch

_DIAGNOSTIC_LOG_BYTES = 4096


class SandboxImageUnavailable(SandboxError):
    """The cluster cannot pull the sandbox image."""


class SandboxUnschedulable(SandboxError):
    """No node can take the sandbox Pod (resources, taints, quota) within the startup time."""


class KubernetesSandbox:
    """Runs each :class:`SandboxSpec` in a new Pod in the sandbox namespace."""

    def __init__(self, api: CoreV1Api, settings: KubernetesSettings, *, user: str, owner: str,
                 stop: StopSwitch = PROCESS) -> None:
        """Create a backend.

        Args:
            api: A configured CoreV1Api (in-cluster or kubeconfig).
            settings: Namespace, runtime class, pull policy, startup and poll times.
            user: ``uid:gid`` the sandboxed program runs as (never 0).
            owner: Identifies this controller (its Pod name in-cluster) in labels.
            stop: The process's stop switch: a thrown one deletes the running Pod and starts none.
        """
        self._stop = stop
        # Any: with _preload_content=False the client returns raw urllib3 responses and takes
        # plain dicts as bodies, which its annotations (the decoded models) do not say.
        self._api: Any = api
        self._settings, self._user, self._owner = settings, user, owner

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Execute ``spec`` in a throwaway Pod and return what happened.

        Raises:
            Stopped: the process was told to stop (the Pod is deleted, none is created after it).
        """
        self._stop.check()
        name = f"sandloop-{uuid.uuid4().hex[:12]}"
        startup = self._settings.startup_seconds
        ns, labels = self._settings.namespace, pod_labels(spec, self._owner, now(), startup)
        configmap = input_configmap(name, ns, spec, labels)  # too large: raised before anything exists
        pod = sandbox_pod(name, ns, spec, labels, user=self._user,
                          image_pull_policy=self._settings.image_pull_policy,
                          runtime_class_name=self._settings.runtime_class_name,
                          frame_bytes=self._settings.frame_bytes, startup_seconds=startup)
        started = time.monotonic()
        try:
            for create, body in ((self._api.create_namespaced_config_map, configmap),
                                 (self._api.create_namespaced_pod, pod)):
                create(ns, body, _preload_content=False, _request_timeout=self._timeout)
            verdict = self._wait(name, spec, started)
            return self._result(name, spec, verdict, time.monotonic() - started)
        except ApiException as exc:
            if exc.status == 429 or (exc.status or 0) >= 500:
                raise InfraFault("api_unreachable", f"the Kubernetes API server could not answer for {name}: "
                                 f"{exc.status} {exc.reason}") from exc
            raise SandboxError(f"the Kubernetes API refused {name}: {exc.status} {exc.reason}") from exc
        except urllib3.exceptions.HTTPError as exc:
            raise InfraFault("api_unreachable", f"the Kubernetes API server did not answer for {name}: "
                             f"{first_line(exc, 300)}") from exc
        finally:
            self._delete(name)

    def prewarm(self, spec: SandboxSpec) -> None:
        """Nothing to warm: every Pod is created for its execution (kept for the Services interface)."""

    def close(self) -> None:
        """Nothing held between executions."""

    @property
    def _timeout(self) -> float:
        return self._settings.request_timeout_seconds

    def _read_pod(self, name: str) -> dict[str, Any]:
        try:
            response = self._api.read_namespaced_pod(name, self._settings.namespace, _preload_content=False,
                                                     _request_timeout=self._timeout)
        except ApiException as exc:
            if exc.status == 404:  # deleted under us: its node was lost, or it was preempted or drained
                raise InfraFault("pod_lost", f"sandbox pod {name} disappeared while it ran (its node was lost, "
                                 "or it was preempted or drained)") from exc
            raise
        pod: dict[str, Any] = json.loads(response.data)
        return pod

    def _wait(self, name: str, spec: SandboxSpec, started: float) -> Verdict:
        """Read the Pod until it ends; raise when it cannot start; stop at our own deadline."""
        startup = self._settings.startup_seconds
        hard_deadline = started + pod_deadline_seconds(spec, startup) + 5
        while True:
            verdict = read_verdict(self._read_pod(name))
            if verdict.problem_kind == "node_evicted":
                raise InfraFault("pod_evicted",
                                 f"sandbox pod {name} was evicted for its node's sake: {verdict.problem}")
            if verdict.problem_kind == "lost":
                raise InfraFault("pod_lost", f"sandbox pod {name} was lost: {verdict.problem}")
            if verdict.state in ("succeeded", "failed"):
                return verdict
            elapsed = time.monotonic() - started
            if verdict.problem_kind == "image_pull":
                raise SandboxImageUnavailable(
                    f"the cluster cannot pull {spec.image}: {verdict.problem}",
                    hint="push the images with make k8s-images REGISTRY=... and set SBX_KUBERNETES__REGISTRY")
            if verdict.problem_kind == "config":
                raise SandboxError(f"sandbox pod {name} cannot start: {verdict.problem}")
            if verdict.state == "pending" and elapsed > startup:
                why = verdict.problem or "still pending"
                raise SandboxUnschedulable(f"sandbox pod {name} did not start within {startup:.0f} s: {why}",
                                           hint="see docs/kubernetes.md, cluster requirements")
            if time.monotonic() > hard_deadline:
                return Verdict("failed", timed_out=True)
            self._stop.sleep(self._settings.poll_seconds)  # the caller's finally deletes the Pod

    def _log(self, name: str, container: str, limit: int) -> bytes:
        try:
            response = self._api.read_namespaced_pod_log(
                name, self._settings.namespace, container=container, limit_bytes=limit,
                _preload_content=False, _request_timeout=self._timeout)
        except ApiException as exc:
            if exc.status in (400, 404):  # the container never started: no log
                return b""
            raise
        data: bytes = response.data
        return data

    def _result(self, name: str, spec: SandboxSpec, verdict: Verdict, seconds: float) -> SandboxResult:
        frame = Frame()
        if verdict.state == "succeeded":
            frame = decode_frame(self._log(name, COLLECTOR, self._settings.frame_bytes + 1), spec)
        stderr = frame.streams.get("stderr", CapturedStream(b"", 0))
        if verdict.state == "failed" and not verdict.timed_out:
            note = (verdict.problem or "") + "\n" + self._log(name, PROGRAM, _DIAGNOSTIC_LOG_BYTES).decode(
                "utf-8", errors="replace")
            stderr = CapturedStream(note.strip().encode(), len(note.strip().encode()))
        if verdict.problem_kind == "failed":  # not the program's doing: the launcher or collector broke
            raise SandboxError(f"sandbox pod {name} failed: {stderr.text[-300:]}")
        exit_code = frame.exit_code if verdict.state == "succeeded" else verdict.program_exit
        if verdict.problem_kind == "evicted":  # the program filled its emptyDir: its failure, no exit code
            exit_code = None
        if verdict.state == "succeeded" and frame.error:
            raise SandboxError(f"the sandbox program could not run in {spec.image}: {frame.error}")
        return SandboxResult(
            exit_code=exit_code,
            stdout=frame.streams.get("stdout", CapturedStream(b"", 0)), stderr=stderr,
            timed_out=verdict.timed_out or frame.timed_out,
            oom_killed=verdict.oom_killed or frame.oom_killed,
            wall_seconds=frame.wall_seconds or seconds, files=frame.files,
            container_id=name, truncated_files=tuple(frame.truncated_files),
        )

    def _delete(self, name: str) -> None:
        """Delete the Pod (no grace: it holds nothing worth a clean stop) and the ConfigMap."""
        ns = self._settings.namespace
        for delete in (self._api.delete_namespaced_pod, self._api.delete_namespaced_config_map):
            # gone already, or the API is down: the reaper removes it by its expiry label
            with contextlib.suppress(ApiException, urllib3.exceptions.HTTPError):
                delete(name, ns, grace_period_seconds=0, propagation_policy="Background",
                       _preload_content=False, _request_timeout=self._timeout)
