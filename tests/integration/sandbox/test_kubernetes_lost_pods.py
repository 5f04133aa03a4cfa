"""A Pod the cluster loses is run again, and the result is the new Pod's real run.

The Kubernetes backend talks to kmock's emulated API server (``cluster.py``); its kubelet here
runs each Pod for real on the Docker engine (``pod_in_docker.py``: the rendered Pod's
containers, the in-Pod launcher and collector), then reports what a scenario says: the first
Pod evicted for its node's sake or its node lost, the next one succeeded with its collector's
real log. Both are test doubles for what cannot exist here (a cluster).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from agents.bank_parser.evaluate import RESULT_FILE, parser_spec
from agents.ports.sandbox import SandboxLimits
from controller.platform.sandbox.kubernetes.backend import KubernetesSandbox
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.kubernetes.frame import decode_frame
from controller.platform.sandbox.retry import InfraRetrySettings, RetryingSandbox
from controller.platform.settings import PROJECT_ROOT
from tests.integration.sandbox.pod_in_docker import PodRun, run_pod
from tests.unit.controller.platform.sandbox.kubernetes import cluster as k

NS = "sandloop-sandboxes"
PDF = (PROJECT_ROOT / "data" / "icici" / "icici sample.pdf").read_bytes()
#: Each run returns a token of its own, so the result shows which Pod's run it is.
PARSER = "import uuid\nimport pandas as pd\ndef parse(path):\n    return pd.DataFrame({'run': [uuid.uuid4().hex]})\n"


@pytest.fixture(autouse=True)
def no_pod_leftovers(docker_client):  # noqa: ANN001, ANN201
    """Nothing the Pods ran is left on the engine (their own label)."""
    yield
    mine = {"label": "org.sandloop.agent=pytest-k8s"}
    assert not docker_client.containers.list(all=True, ignore_removed=True, filters=mine)
    assert not docker_client.volumes.list(filters=mine)


class RealKubelet:
    """Runs each new Pod for real in a thread; the first is then reported ``lost``, later ones succeed."""

    def __init__(self, cluster: k.Cluster, docker_client: Any, lost: k.Status) -> None:
        self.cluster, self.client, self.lost = cluster, docker_client, lost
        self.order: list[str] = []
        self.runs: dict[str, PodRun] = {}

    def status(self, pod: dict[str, Any]) -> dict[str, Any]:
        name = pod["metadata"]["name"]
        self.order.append(name)
        configmap = self._configmap(name)
        threading.Thread(target=self._run, args=(name, configmap, pod), daemon=True).start()
        return {"phase": "Running"}

    def _configmap(self, name: str) -> dict[str, Any]:
        for (resource, _, found), obj in list(self.cluster.emulator.objects.items()):
            if resource.plural == "configmaps" and found == name:
                return dict(obj.raw)
        raise AssertionError(f"no ConfigMap for {name}")

    def _run(self, name: str, configmap: dict[str, Any], pod: dict[str, Any]) -> None:
        run = run_pod(self.client, configmap, pod)
        self.runs[name] = run
        if name == self.order[0]:
            self.cluster.later[name] = self.lost(pod)
            return
        self.cluster.pod_logs[(name, "collector")] = run.collector_log
        self.cluster.later[name] = {"phase": "Succeeded",
                                    "initContainerStatuses": [k.terminated("program", run.program_exit)],
                                    "containerStatuses": [k.terminated("collector", run.collector_exit)]}


@pytest.fixture(scope="module")
def emulated():  # noqa: ANN201
    with k.emulated_cluster() as running:
        yield running


@pytest.mark.parametrize(("lost", "reason"), [(k.node_pressure, "pod_evicted"), (k.node_lost, "pod_lost")],
                         ids=["evicted_for_the_node", "node_lost"])
def test_a_lost_pod_is_run_again_and_only_the_new_run_counts(emulated, docker_client, parser_image, lost, reason):
    """The first Pod ran (for real) but was lost: a second Pod's real run is the result, nothing of
    the first is mixed in, and every Pod, ConfigMap, container and volume is gone afterwards."""
    kubelet = RealKubelet(emulated, docker_client, lost)
    emulated.status = kubelet.status
    settings = KubernetesSettings(namespace=NS, poll_seconds=0.05, startup_seconds=120)
    backend = KubernetesSandbox(emulated.api(), settings, user="10001:10001", owner="pytest")
    spec = parser_spec(parser_image, PARSER, PDF, SandboxLimits(timeout_seconds=90), {"agent": "pytest"})
    try:
        result = RetryingSandbox(backend, InfraRetrySettings(backoff_seconds=0.1, max_backoff_seconds=0.2)).run(spec)
    finally:
        emulated.status = k.succeeded
    first, second = (kubelet.runs[name] for name in kubelet.order)
    assert result.infra_retries == (reason,) and result.exit_code == 0
    served = result.files[RESULT_FILE]
    assert served == decode_frame(second.collector_log, spec).files[RESULT_FILE]
    assert served != decode_frame(first.collector_log, spec).files[RESULT_FILE]
    deadline = time.monotonic() + 10
    while (emulated.live("pods") or emulated.live("configmaps")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert emulated.live("pods") == [] and emulated.live("configmaps") == []
