"""The Pod and ConfigMap builders, labels, the reaper's expiry rule, and Pod status verdicts."""

from __future__ import annotations

import pytest

from agents.ports.sandbox import SandboxSpec
from controller.platform.sandbox.kubernetes.podspec import (
    CONFIGMAP_MAX_BYTES,
    InputsTooLarge,
    input_configmap,
    label_value,
    pod_labels,
)
from controller.platform.sandbox.kubernetes.reaper import is_expired
from controller.platform.sandbox.kubernetes.status import read_verdict
from tests.unit.controller.platform.sandbox.kubernetes import cluster as k

SPEC = SandboxSpec(image="x", command=("x",), inputs={"a.pdf": b"%PDF"}, labels={"run_id": "20260101 icici:1"})


class TestObjects:
    def test_label_values_are_valid_kubernetes_values(self) -> None:
        """Colons, spaces and length are fixed: [A-Za-z0-9._-], <= 63, alphanumeric ends."""
        assert label_value("host:123") == "host-123"
        assert label_value("-" + "a" * 80) == "a" * 62
        assert label_value("::") == "none"

    def test_labels_carry_an_expiry_after_the_pods_deadline(self) -> None:
        """expires = created + activeDeadlineSeconds + grace, so live work is never reaped."""
        labels = pod_labels(SPEC, "pod-1", now=1000.0)
        assert int(labels["org.sandloop.expires"]) > 1000 + SPEC.limits.timeout_seconds
        assert labels["org.sandloop.run_id"] == "20260101-icici-1"

    def test_inputs_over_a_configmaps_capacity_are_refused_with_the_way_out(self) -> None:
        """Too large: InputsTooLarge (a usage error, exit 2) naming the limit and the docker backend."""
        big = SandboxSpec(image="x", command=("x",), inputs={"a.pdf": b"x" * (CONFIGMAP_MAX_BYTES // 4 * 3 + 10)})
        with pytest.raises(InputsTooLarge) as raised:
            input_configmap("n", "ns", big, {})
        assert raised.value.exit_code == 2 and "SBX_SANDBOX_BACKEND=docker" in raised.value.one_line()

    def test_the_configmap_is_immutable_binary_data(self) -> None:
        """Inputs are base64 binaryData, and the object cannot be changed after creation."""
        configmap = input_configmap("n", "ns", SPEC, {})
        assert configmap["immutable"] is True and configmap["binaryData"] == {"a.pdf": "JVBERg=="}


class TestReaperRule:
    @pytest.mark.parametrize(("labels", "expired"), [
        ({"org.sandloop.expires": "999"}, True), ({"org.sandloop.expires": "1001"}, False),
        ({"org.sandloop.expires": "soon"}, True), ({}, True), (None, True)])
    def test_expiry(self, labels: dict | None, expired: bool) -> None:
        """Past, future, malformed and missing expiry labels at now=1000."""
        assert is_expired(labels, 1000.0) is expired


class TestVerdicts:
    def test_each_kubelet_scenario_maps_to_one_verdict(self) -> None:
        """Succeeded, OOMKilled, DeadlineExceeded, Unschedulable, ImagePullBackOff, still pending."""
        assert read_verdict({"status": k.succeeded({})}).state == "succeeded"
        oom = read_verdict({"status": k.oom_killed({})})
        assert (oom.state, oom.oom_killed, oom.program_exit) == ("failed", True, 137)
        assert read_verdict({"status": k.past_deadline({})}).timed_out
        assert read_verdict({"status": k.unschedulable({})}).problem_kind == "unschedulable"
        assert read_verdict({"status": k.image_pull_failing({})}).problem_kind == "image_pull"
        assert read_verdict({}).state == "pending"

    def test_the_node_going_away_is_not_the_programs_doing(self) -> None:
        """Node pressure: node_evicted; node lost, shut down or the Pod preempted: lost (both retried)."""
        assert read_verdict({"status": k.node_pressure({})}).problem_kind == "node_evicted"
        for lost in (k.node_lost, k.node_shutdown, k.preempted):
            assert read_verdict({"status": lost({})}).problem_kind == "lost", lost.__name__

    def test_an_eviction_says_why(self) -> None:
        """An emptyDir over its sizeLimit evicts the Pod: a failed verdict carrying the kubelet's message."""
        verdict = read_verdict({"status": {"phase": "Failed", "reason": "Evicted",
                                           "message": "Usage of EmptyDir volume \"out\" exceeds the limit \"128Mi\"."}})
        assert verdict.problem_kind == "evicted" and "EmptyDir" in verdict.problem


class TestExpiry:
    def test_a_pod_still_starting_is_never_expired_while_its_controller_waits(self) -> None:
        """expires is past the controller's own deadline (startup + timeout + grace)."""
        from controller.platform.sandbox.kubernetes.podspec import pod_deadline_seconds

        labels = pod_labels(SPEC, "c", now=0.0, startup_seconds=300)
        assert (int(labels["org.sandloop.expires"]) > pod_deadline_seconds(SPEC, 300) + 5
                >= 300 + SPEC.limits.timeout_seconds)
