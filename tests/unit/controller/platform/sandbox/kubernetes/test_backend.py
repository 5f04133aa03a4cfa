"""The Kubernetes backend's API conversation, against kmock's emulated API server on loopback.

The test plays the kubelet (see ``cluster.py``): each scenario gives the Pod the status a
real kubelet would, and the collector's log is what the real in-Pod program writes.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Iterator

import pytest

from agents.ports.errors import InfraFault, SandboxError
from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.kubernetes import reaper
from controller.platform.sandbox.kubernetes.backend import (
    KubernetesSandbox,
    SandboxImageUnavailable,
    SandboxUnschedulable,
)
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.kubernetes.podspec import InputsTooLarge
from controller.platform.sandbox.retry import (
    InfraRetriesExhausted,
    InfraRetrySettings,
    RetryingSandbox,
)
from tests.unit.controller.platform.sandbox.kubernetes import cluster as k

NS = "sandloop-sandboxes"


@pytest.fixture(scope="module")
def emulated() -> Iterator[k.Cluster]:
    """One emulated API server for the module (starting it costs ~0.1 s)."""
    with k.emulated_cluster() as running:
        yield running


@pytest.fixture()
def cluster(emulated: k.Cluster) -> Iterator[k.Cluster]:
    """The emulator, reset to the succeeding kubelet after each test."""
    yield emulated
    emulated.status, emulated.logs = k.succeeded, {}


def _backend(cluster: k.Cluster, **settings: object) -> KubernetesSandbox:
    config = KubernetesSettings(**{"namespace": NS, "poll_seconds": 0.02, "startup_seconds": 5, **settings})
    return KubernetesSandbox(cluster.api(), config, user="10001:10001", owner="pytest")


def _spec(**limits: object) -> SandboxSpec:
    return SandboxSpec(image="sandloop/python-parser:test", command=("python3", "/opt/sandloop/entrypoint.py"),
                       inputs={"parser.py": b"def parse(p): ...\n", "statement.pdf": b"%PDF-1.7\n"},
                       collect=("result.json",), limits=SandboxLimits(**limits), labels={"run_id": "r1"})


def _assert_clean(cluster: k.Cluster) -> None:
    assert cluster.live("pods") == []
    assert cluster.live("configmaps") == []
    assert cluster.verbs() <= k.role_grants(), cluster.verbs() - k.role_grants()


class TestConversation:
    def test_a_pod_that_succeeds_yields_the_collectors_frame_and_is_deleted(self, cluster: k.Cluster) -> None:
        """Exit code, both streams and result.json come from the collector's log; Pod and ConfigMap go."""
        cluster.logs["collector"] = k.real_frame(
            "import sys; print('out'); print('err', file=sys.stderr); "
            "open('OUT/result.json', 'w').write('{}'); sys.exit(1)")
        result = _backend(cluster).run(_spec())
        assert (result.exit_code, result.stdout.text, result.stderr.text) == (1, "out\n", "err\n")
        assert result.files == {"result.json": b"{}"}
        assert result.outcome == "nonzero_exit"
        _assert_clean(cluster)

    def test_the_inputs_travel_in_a_configmap_the_pod_mounts(self, cluster: k.Cluster) -> None:
        """The ConfigMap created carries each input as binaryData and the Pod mounts it read-only."""
        cluster.logs["collector"] = k.real_frame("pass")
        _backend(cluster).run(_spec())
        created = [r for r in list(cluster.emulator) if r.action.name == "CREATE"]
        configmap = next(r.data for r in created if r.resource.plural == "configmaps")
        pod = next(r.data for r in created if r.resource.plural == "pods")
        assert set(configmap["binaryData"]) == {"parser.py", "statement.pdf"}
        mount = next(m for m in pod["spec"]["initContainers"][0]["volumeMounts"] if m["name"] == "in")
        assert mount["readOnly"] is True

    def test_an_oom_killed_pod_is_reported_as_oom(self, cluster: k.Cluster) -> None:
        """Init container terminated with reason OOMKilled: outcome oom, exit 137."""
        cluster.status = k.oom_killed
        result = _backend(cluster).run(_spec())
        assert (result.outcome, result.exit_code) == ("oom", 137)
        _assert_clean(cluster)

    def test_a_pod_past_its_deadline_is_a_timeout(self, cluster: k.Cluster) -> None:
        """Phase Failed with reason DeadlineExceeded: outcome timeout."""
        cluster.status = k.past_deadline
        assert _backend(cluster).run(_spec()).outcome == "timeout"
        _assert_clean(cluster)

    def test_a_pod_never_scheduled_raises_unschedulable(self, cluster: k.Cluster) -> None:
        """No node fits within startup_seconds: SandboxUnschedulable naming the scheduler's message."""
        cluster.status = k.unschedulable
        with pytest.raises(SandboxUnschedulable, match="Insufficient memory"):
            _backend(cluster, startup_seconds=0.3).run(_spec())
        _assert_clean(cluster)

    def test_an_image_pull_failure_raises_at_once(self, cluster: k.Cluster) -> None:
        """ImagePullBackOff: SandboxImageUnavailable with how to push the images."""
        cluster.status = k.image_pull_failing
        with pytest.raises(SandboxImageUnavailable, match="ImagePullBackOff") as raised:
            _backend(cluster).run(_spec())
        assert "make k8s-images" in raised.value.one_line()
        _assert_clean(cluster)

    def test_a_frame_cut_short_is_an_error_not_a_partial_result(self, cluster: k.Cluster) -> None:
        """A log truncated by limitBytes or rotation fails the end record's digest."""
        cluster.logs["collector"] = k.real_frame("print('x' * 50000)")
        with pytest.raises(SandboxError, match="incomplete"):
            _backend(cluster, frame_bytes=64 << 10).run(_spec(output_bytes=1 << 20))
        _assert_clean(cluster)

    def test_inputs_too_large_for_a_configmap_create_nothing(self, cluster: k.Cluster) -> None:
        """Over one ConfigMap's capacity: InputsTooLarge (exit 2) before any request."""
        before = len(list(cluster.emulator))
        spec = SandboxSpec(image="x", command=("x",), inputs={"statement.pdf": b"%" * 900_000})
        with pytest.raises(InputsTooLarge, match="at most"):
            _backend(cluster).run(spec)
        assert len(list(cluster.emulator)) == before

    def test_ctrl_c_while_waiting_still_deletes_the_pod(self, cluster: k.Cluster) -> None:
        """KeyboardInterrupt mid-wait propagates and the Pod and ConfigMap are deleted."""
        cluster.status = k.never_started
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            _backend(cluster, startup_seconds=30).run(_spec())
        timer.cancel()
        _assert_clean(cluster)


class TestReaper:
    def test_only_objects_past_their_expiry_are_deleted(self, cluster: k.Cluster) -> None:
        """An expired Pod and ConfigMap go; a live one stays; only granted verbs are used."""
        api = cluster.api()
        for name, expires in (("old", "100"), ("live", "9999999999")):
            labels = {"org.sandloop.managed": "1", "org.sandloop.expires": expires}
            api.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": labels}})
            api.create_namespaced_pod(NS, {"metadata": {"name": name, "labels": labels},
                                           "spec": {"containers": [{"name": "c", "image": "x"}]}})
        assert reaper.reap_expired(api, NS, now=1000.0) == 2
        assert cluster.live("pods") == ["live"] and cluster.live("configmaps") == ["live"]
        api.delete_namespaced_pod("live", NS)
        api.delete_namespaced_config_map("live", NS)
        assert cluster.verbs() <= k.role_grants()


class TestServices:
    def test_docker_only_commands_stop_with_one_line(self, cluster: k.Cluster) -> None:
        """bench and the idris2 image build ask for a Docker client: a UsageError (exit 2), not an AttributeError."""
        from agents.ports.errors import UsageError
        from controller.platform.sandbox.instrumented import InstrumentedSandbox
        from controller.platform.settings import Settings
        from controller.runner.kubernetes_services import KubernetesServices

        settings = Settings(_env_file=None, kubernetes={"registry": "r.example/t"})  # type: ignore[call-arg]
        backend = _backend(cluster)
        services = KubernetesServices(settings, cluster.api(), InstrumentedSandbox(backend), print, backend)
        with pytest.raises(UsageError, match="needs a Docker engine"):
            services.client  # noqa: B018
        assert services.image("python-parser").startswith("r.example/t/sandloop/python-parser:")


class TestBrokenPods:
    def test_a_pod_failed_for_another_reason_is_an_engine_error(self, cluster: k.Cluster) -> None:
        """The collector crashed (phase Failed, no OOM, no deadline): SandboxError, never an empty 'ok'."""
        cluster.status = lambda pod: {"phase": "Failed", "initContainerStatuses": [k.terminated("program", 0)],
                                      "containerStatuses": [k.terminated("collector", 1, "Error")]}
        cluster.logs["program"] = b"launcher: boom"
        with pytest.raises(SandboxError, match="failed"):
            _backend(cluster).run(_spec())
        _assert_clean(cluster)

    def test_an_evicted_pod_is_a_failed_result_saying_why(self, cluster: k.Cluster) -> None:
        """An emptyDir over its sizeLimit: no exit code, the kubelet's message in stderr."""
        cluster.status = lambda pod: {"phase": "Failed", "reason": "Evicted",
                                      "message": "Usage of EmptyDir volume \"out\" exceeds the limit \"128Mi\"."}
        result = _backend(cluster).run(_spec())
        assert result.exit_code is None and result.outcome == "nonzero_exit"
        assert "EmptyDir" in result.stderr.text
        _assert_clean(cluster)


def _retrying(cluster: k.Cluster, tries: int = 3) -> RetryingSandbox:
    return RetryingSandbox(_backend(cluster), InfraRetrySettings(tries=tries, backoff_seconds=0.01,
                                                                 max_backoff_seconds=0.02))


class TestInfrastructureLost:
    @pytest.mark.parametrize(("lost", "reason"), [
        (k.node_pressure, "pod_evicted"), (k.node_lost, "pod_lost"), (k.node_shutdown, "pod_lost"),
        (k.preempted, "pod_lost"),
    ], ids=["node_pressure", "node_lost", "node_shutdown", "preempted"])
    def test_a_pod_the_cluster_lost_is_run_again_in_a_new_pod(self, cluster: k.Cluster, lost, reason) -> None:
        """Evicted for the node's sake, node gone, preempted: a second Pod serves; both are deleted."""
        cluster.logs["collector"] = k.real_frame("open('OUT/result.json', 'w').write('{}')")
        cluster.status = k.first_then(lost, k.succeeded)
        before = cluster.created("pods")
        result = _retrying(cluster).run(_spec())
        assert (result.exit_code, result.files, result.infra_retries) == (0, {"result.json": b"{}"}, (reason,))
        assert cluster.created("pods") - before == 2
        _assert_clean(cluster)

    def test_a_pod_deleted_while_waited_for_is_lost_and_run_again(self, cluster: k.Cluster) -> None:
        """The Pod vanishes (404) mid-wait, as when its node is removed: pod_lost, a new Pod serves."""
        cluster.logs["collector"] = k.real_frame("pass")
        cluster.status = k.first_then(k.never_started, k.succeeded)
        api = cluster.api()

        def delete_the_first() -> None:
            pods = cluster.live("pods")
            if pods:
                api.delete_namespaced_pod(pods[0], NS)

        timer = threading.Timer(0.3, delete_the_first)
        timer.start()
        result = _retrying(cluster).run(_spec())
        timer.cancel()
        assert result.infra_retries == ("pod_lost",) and result.exit_code == 0
        _assert_clean(cluster)

    def test_an_api_server_briefly_unreachable_is_retried(self, cluster: k.Cluster) -> None:
        """503 on a Pod read (the API server restarting): api_unreachable, then served."""
        cluster.logs["collector"] = k.real_frame("pass")
        cluster.outage(requests=1)
        result = _retrying(cluster).run(_spec())
        assert result.infra_retries == ("api_unreachable",) and result.exit_code == 0
        _assert_clean(cluster)

    def test_a_cluster_that_keeps_losing_it_ends_in_one_line(self, cluster: k.Cluster) -> None:
        """Evicted on every try: InfraRetriesExhausted naming pod_evicted, exit 3, nothing left."""
        cluster.status = k.node_pressure
        with pytest.raises(InfraRetriesExhausted, match="pod_evicted, pod_evicted") as raised:
            _retrying(cluster, tries=2).run(_spec())
        assert raised.value.exit_code == 3
        _assert_clean(cluster)

    def test_an_eviction_for_the_pods_own_storage_is_its_result(self, cluster: k.Cluster) -> None:
        """Over its own emptyDir limit: the program's doing, one Pod, no retry."""
        cluster.status = lambda pod: {"phase": "Failed", "reason": "Evicted",
                                      "message": "Usage of EmptyDir volume \"out\" exceeds the limit \"128Mi\"."}
        before = cluster.created("pods")
        result = _retrying(cluster).run(_spec())
        assert result.infra_retries == () and cluster.created("pods") - before == 1
        _assert_clean(cluster)

    def test_the_backend_raises_infra_faults_itself(self, cluster: k.Cluster) -> None:
        """Without the retry layer the backend's own error is an InfraFault with its reason."""
        cluster.status = k.node_lost
        with pytest.raises(InfraFault) as raised:
            _backend(cluster).run(_spec())
        assert raised.value.reason == "pod_lost"
        _assert_clean(cluster)
