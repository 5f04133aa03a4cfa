"""An emulated Kubernetes API server on loopback (kmock's KubernetesEmulator) and a scripted kubelet.

Test double, for what cannot exist here: no cluster is reachable from CI. The API side is
kmock's emulator (an existing library that stores objects and answers the real REST
paths the official client calls); the kubelet side is this module: it gives each new Pod
the status a scenario says (succeeded, OOM-killed, past its deadline, unschedulable, image
pull failing) and serves the collector's log. Every request is recorded, so a test can
check which verbs the backend used and that nothing is left behind.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kmock
from kubernetes import client

from controller.platform.settings import PROJECT_ROOT

POD_PROGRAM = PROJECT_ROOT / "sandbox_images" / "python-parser" / "k8s_pod.py"
_VERBS = {"CREATE": "create", "FETCH": "get", "LIST": "list", "WATCH": "watch", "DELETE": "delete",
          "UPDATE": "patch"}

Status = Callable[[dict[str, Any]], dict[str, Any] | None]


def container(name: str, state: dict[str, Any]) -> dict[str, Any]:
    """A container status with every field the API server always sets."""
    return {"name": name, "ready": False, "restartCount": 0, "image": "x", "imageID": "", "state": state}


def terminated(name: str, exit_code: int, reason: str = "Completed") -> dict[str, Any]:
    """A container status in the terminated state."""
    return container(name, {"terminated": {"exitCode": exit_code, "reason": reason}})


def succeeded(pod: dict[str, Any]) -> dict[str, Any]:
    """The kubelet ran both containers to completion."""
    return {"phase": "Succeeded", "initContainerStatuses": [terminated("program", 0)],
            "containerStatuses": [terminated("collector", 0)]}


def oom_killed(pod: dict[str, Any]) -> dict[str, Any]:
    """The program container hit its memory limit (the kernel killed it; the Pod failed)."""
    return {"phase": "Failed", "initContainerStatuses": [terminated("program", 137, "OOMKilled")],
            "containerStatuses": [container("collector", {"waiting": {"reason": "PodInitializing"}})]}


def past_deadline(pod: dict[str, Any]) -> dict[str, Any]:
    """The Pod outlived activeDeadlineSeconds."""
    return {"phase": "Failed", "reason": "DeadlineExceeded",
            "message": "Pod was active on the node longer than the specified deadline"}


def unschedulable(pod: dict[str, Any]) -> dict[str, Any]:
    """No node fits the Pod."""
    return {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                "message": "0/3 nodes are available: 3 Insufficient memory."}]}


def image_pull_failing(pod: dict[str, Any]) -> dict[str, Any]:
    """The node cannot pull the image."""
    return {"phase": "Pending", "initContainerStatuses": [
        container("program", {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}})]}


def never_started(pod: dict[str, Any]) -> dict[str, Any]:
    """Scheduled, but nothing happens (for Ctrl-C tests)."""
    return {"phase": "Pending"}


def node_pressure(pod: dict[str, Any]) -> dict[str, Any]:
    """The kubelet evicted the Pod because its node ran short of memory (not the Pod's doing)."""
    return {"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Mi. "}


def node_lost(pod: dict[str, Any]) -> dict[str, Any]:
    """The node stopped reporting: the API server shows the Pod's phase as Unknown."""
    return {"phase": "Unknown"}


def node_shutdown(pod: dict[str, Any]) -> dict[str, Any]:
    """Graceful node shutdown ended the Pod."""
    return {"phase": "Failed", "reason": "Terminated",
            "message": "Pod was terminated in response to imminent node shutdown."}


def preempted(pod: dict[str, Any]) -> dict[str, Any]:
    """The scheduler preempted the Pod for a higher-priority one."""
    return {"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True",
                                               "reason": "PreemptionByScheduler"}]}


def first_then(first: Status, then: Status) -> Status:
    """The first Pod gets ``first``'s status, every later one ``then``'s."""
    seen: list[str] = []

    def status(pod: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(pod["metadata"]["name"])
        return first(pod) if len(seen) == 1 else then(pod)

    return status


def real_frame(program: str, collect: tuple[str, ...] = ("result.json",), output_bytes: int = 1 << 20) -> bytes:
    """The collector's log for ``program`` (Python source), made by the real in-Pod program on this host."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(POD_PROGRAM), "launch", "--timeout", "20", "--fsize", str(1 << 24),
                        "--nofile", "64", "--output-bytes", str(output_bytes), "--out-dir", out, "--",
                        sys.executable, "-c", program.replace("OUT", out)], check=True)
        done = subprocess.run([sys.executable, str(POD_PROGRAM), "collect", "--output-bytes", str(output_bytes),
                               "--collect-bytes", str(1 << 20), "--frame-bytes", str(4 << 20), "--out-dir", out,
                               "--", *collect], check=True, capture_output=True)
    return done.stdout


@dataclass
class Cluster:
    """The running emulator, its URL and the scripted kubelet's behaviour."""

    emulator: Any
    url: str
    status: Status = succeeded
    logs: dict[str, bytes] = field(default_factory=dict)
    #: Statuses (and container logs) to give named Pods once set, e.g. by a kubelet that runs
    #: the Pod in a thread (tests/integration/sandbox/test_kubernetes_lost_pods.py).
    later: dict[str, dict[str, Any]] = field(default_factory=dict)
    pod_logs: dict[tuple[str, str], bytes] = field(default_factory=dict)

    def api(self) -> client.CoreV1Api:
        """A CoreV1Api of the official client pointed at the emulator."""
        config = client.Configuration()
        config.host = self.url.rstrip("/")
        return client.CoreV1Api(client.ApiClient(config))

    def created(self, plural: str) -> int:
        """How many objects of ``plural`` were created."""
        return sum(1 for r in list(self.emulator) if r.action is not None and r.action.name == "CREATE"
                   and r.resource is not None and r.resource.plural == plural)

    def outage(self, requests: int) -> None:
        """Answer the next ``requests`` GET requests 503, as an API server restarting would."""
        seen: set[int] = set()
        # kmock also matches the criterion against requests already served: only later ones count.
        after = max((r.id for r in list(self.emulator)), default=-1)

        def down(request: Any) -> bool:
            if request.method.name != "GET" or request.id <= after:
                return False
            if request.id not in seen and len(seen) >= requests:
                return False
            seen.add(request.id)
            return True

        self.emulator[down] << 503

    def live(self, plural: str) -> list[str]:
        """Names of objects of ``plural`` that exist (not deleted)."""
        return [name for (resource, _, name), obj in list(self.emulator.objects.items())
                if resource.plural == plural and not obj.deleted]

    def verbs(self) -> set[tuple[str, str]]:
        """(resource[/subresource], verb) of every request the server got."""
        used = set()
        for request in list(self.emulator):
            if request.resource is None:
                continue
            resource = request.resource.plural + (f"/{request.subresource}" if request.subresource else "")
            used.add((resource, _VERBS[request.action.name]))
        return used

    async def kubelet(self) -> None:
        """Give each new Pod its scenario's status, once."""
        seen: set[str] = set()
        while True:
            for (resource, _, name), obj in list(self.emulator.objects.items()):
                if resource.plural != "pods" or obj.deleted:
                    continue
                if name not in seen:
                    seen.add(name)
                    status = self.status(obj.raw)
                    if status is not None:
                        obj.patch({"status": status})
                deferred = self.later.pop(name, None)
                if deferred is not None:
                    obj.patch({"status": deferred})
            await asyncio.sleep(0.01)

    def serve_log(self, request: Any) -> bytes:
        """The log of the requested container, cut at limitBytes like the real server."""
        container = request.params.get("container", "")
        data = self.pod_logs.get((request.name or "", container), self.logs.get(container, b""))
        limit = request.params.get("limitBytes")
        return data[: int(limit)] if limit else data


@contextmanager
def emulated_cluster() -> Iterator[Cluster]:
    """Start kmock's KubernetesEmulator on 127.0.0.1 in a thread; stop it afterwards."""
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, Cluster] = {}

    async def serve() -> None:
        async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator) as server:
            cluster = Cluster(emulator, str(server.url))
            emulator[kmock.subresource("log")] << cluster.serve_log
            box["cluster"] = cluster
            task = asyncio.create_task(cluster.kubelet())
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)
            task.cancel()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("kmock did not start")
    try:
        yield box["cluster"]
    finally:
        stop.set()
        thread.join(10)


def role_grants(rbac: Path = PROJECT_ROOT / "deploy" / "k8s" / "base" / "rbac.yaml") -> set[tuple[str, str]]:
    """(resource, verb) pairs the deployed Role grants."""
    import yaml

    grants = set()
    for doc in yaml.safe_load_all(rbac.read_text(encoding="utf-8")):
        if doc and doc["kind"] == "Role":
            for rule in doc["rules"]:
                grants |= {(r, v) for r in rule["resources"] for v in rule["verbs"]}
    return grants
