"""deploy/k8s and the rendered sandbox objects: schema-valid for recent Kubernetes versions,
Pod Security ``restricted`` on every Pod template, RBAC and NetworkPolicies as documented, and
the service's Deployment wired to its Service, settings, secret, probes and drain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from controller.entry.k8s_render import (
    deploy_objects,
    load_base,
    render,
    sandbox_objects,
    token_objects,
)
from controller.platform.settings import PROJECT_ROOT, Settings

K8S = PROJECT_ROOT / "deploy" / "k8s"
VERSIONS = ("1.33.0", "1.35.0", "1.37.0")
SERVICE = "sandloop-service"
RESTRICTED_NAMESPACE_LABELS = {f"pod-security.kubernetes.io/{mode}": "restricted"
                               for mode in ("enforce", "audit", "warn")}


def _settings(**overrides: Any) -> Settings:
    return Settings(_env_file=None, **overrides)  # type: ignore[call-arg]


def _manifest_files() -> list[Path]:
    return sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")


def _all_objects() -> list[dict[str, Any]]:
    docs = [d for path in _manifest_files() for d in yaml.safe_load_all(path.read_text()) if d]
    return docs + deploy_objects(_settings(kubernetes={"registry": "registry.example.com/team"})) + \
        sandbox_objects(_settings(kubernetes={"runtime_class_name": "gvisor"})) + token_objects(_settings())


def _pod_specs() -> list[tuple[str, dict[str, Any]]]:
    """(name, PodSpec) of every Pod and Pod template: the Jobs', the service's, the token Job's and the sandbox Pod."""
    specs = []
    for obj in load_base() + sandbox_objects(_settings()) + token_objects(_settings()):
        if obj["kind"] == "Pod":
            specs.append((obj["metadata"]["name"], obj["spec"]))
        elif obj["kind"] == "Deployment":
            specs.append((obj["metadata"]["name"], obj["spec"]["template"]["spec"]))
        elif obj["kind"] in ("Job", "CronJob"):
            job = obj["spec"].get("jobTemplate", {}).get("spec", obj["spec"])
            specs.append((obj["metadata"]["name"], job["template"]["spec"]))
    return specs


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


class TestSchemas:
    @pytest.mark.parametrize("version", VERSIONS)
    def test_every_manifest_and_rendered_object_validates_strictly(self, version: str) -> None:
        """kubernetes-validate --strict (bundled schemas, no network) accepts every object."""
        objects = _all_objects()
        assert len(objects) >= 15
        for obj in objects:
            kubernetes_validate.validate(obj, version, strict=True)

    def test_a_misspelt_field_is_rejected(self) -> None:
        """The strict check is not vacuous: an unknown Pod field fails it."""
        pod = sandbox_objects(_settings())[1]
        pod["spec"]["automountServiceAcountToken"] = False
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(pod, VERSIONS[-1], strict=True)

    def test_the_kustomization_lists_every_base_file(self) -> None:
        """No manifest in base/ is left out of kustomize (and so of `k8s render`)."""
        listed = set(yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())["resources"])
        assert listed == {p.name for p in (K8S / "base").glob("*.yaml")} - {"kustomization.yaml"}


class TestPodSecurityRestricted:
    @pytest.mark.parametrize(("name", "pod"), _pod_specs(), ids=lambda v: v if isinstance(v, str) else "")
    def test_pod_level_fields(self, name: str, pod: dict[str, Any]) -> None:
        """runAsNonRoot, RuntimeDefault seccomp, no host namespaces, no service links; Never restart
        but for the service (a Deployment allows only Always)."""
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True
        assert context["runAsUser"] != 0 and context.get("runAsGroup", 1) != 0
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["restartPolicy"] == ("Always" if name == SERVICE else "Never")
        assert pod["enableServiceLinks"] is False
        assert not any(pod.get(key) for key in ("hostNetwork", "hostPID", "hostIPC"))
        assert not any("hostPath" in volume for volume in pod.get("volumes", []))

    @pytest.mark.parametrize(("name", "pod"), _pod_specs(), ids=lambda v: v if isinstance(v, str) else "")
    def test_container_level_fields(self, name: str, pod: dict[str, Any]) -> None:
        """Every container: no privilege escalation, ALL capabilities dropped, read-only root, limits."""
        for container in _containers(pod):
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert context["readOnlyRootFilesystem"] is True
            assert context.get("privileged") is False
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}
            assert {"memory", "cpu", "ephemeral-storage"} <= set(container["resources"]["limits"])

    def test_only_the_controller_gets_an_api_token(self) -> None:
        """Sandbox Pods and the token Job never mount a service-account token; the controller's Jobs
        and the service (whose workers create sandbox Pods) need one."""
        names = {name for name, _ in _pod_specs()}
        assert {SERVICE, "sandloop-tokens-add", "sandloop-run-icici"} <= names
        for name, pod in _pod_specs():
            assert pod["automountServiceAccountToken"] is (name.startswith("sandloop-run") or name == SERVICE), name

    def test_the_sandbox_pod_has_the_dockers_limits(self) -> None:
        """Memory request = limit, deadline = timeout + grace, size-limited emptyDirs, inputs read-only."""
        settings = _settings(sandbox={"memory_mb": 700, "timeout_seconds": 12, "tmpfs_mb": 32},
                             kubernetes={"startup_seconds": 60})
        configmap, pod = sandbox_objects(settings)
        program = pod["spec"]["initContainers"][0]
        assert program["resources"]["requests"]["memory"] == program["resources"]["limits"]["memory"] == "700Mi"
        assert pod["spec"]["activeDeadlineSeconds"] == 12 + 30 + 60  # timeout, collect, startup (pulls count)
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        assert volumes["tmp"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Mi"}
        assert "sizeLimit" in volumes["out"]["emptyDir"]
        assert volumes["in"]["configMap"]["name"] == configmap["metadata"]["name"]
        collector = pod["spec"]["containers"][0]
        assert {"name": "out", "mountPath": "/work/out", "readOnly": True} in collector["volumeMounts"]
        assert all(label.startswith("org.sandloop.") for label in pod["metadata"]["labels"])

    def test_the_runtime_class_setting_reaches_the_pod(self) -> None:
        """SBX_KUBERNETES__RUNTIME_CLASS_NAME=gvisor puts runtimeClassName on sandbox Pods only when set."""
        assert sandbox_objects(_settings(kubernetes={"runtime_class_name": "gvisor"}))[1]["spec"][
            "runtimeClassName"] == "gvisor"
        assert "runtimeClassName" not in sandbox_objects(_settings())[1]["spec"]


class TestNamespacesRbacNetwork:
    def _base(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in load_base() if obj["kind"] == kind]

    def test_both_namespaces_enforce_audit_and_warn_restricted(self) -> None:
        """Pod Security labels: enforce, audit and warn at restricted on both namespaces."""
        namespaces = self._base("Namespace")
        assert {ns["metadata"]["name"] for ns in namespaces} == {"sandloop", "sandloop-sandboxes"}
        for ns in namespaces:
            assert RESTRICTED_NAMESPACE_LABELS.items() <= ns["metadata"]["labels"].items()

    def test_the_role_grants_exactly_the_backends_verbs_in_the_sandbox_namespace(self) -> None:
        """No exec, attach, watch, secrets or wildcards; no ClusterRole at all."""
        (role,) = self._base("Role")
        assert role["metadata"]["namespace"] == "sandloop-sandboxes"
        grants = {(r, v) for rule in role["rules"] for r in rule["resources"] for v in rule["verbs"]}
        assert grants == {("pods", "create"), ("pods", "get"), ("pods", "list"), ("pods", "delete"),
                          ("pods/log", "get"), ("configmaps", "create"), ("configmaps", "list"),
                          ("configmaps", "delete")}
        assert not self._base("ClusterRole") and not self._base("ClusterRoleBinding")

    def test_sandboxes_get_no_ingress_and_no_egress(self) -> None:
        """The sandbox namespace's policy selects every Pod, denies both directions, allows nothing."""
        policies = [p for p in self._base("NetworkPolicy") if p["metadata"]["namespace"] == "sandloop-sandboxes"]
        assert len(policies) == 1
        spec = policies[0]["spec"]
        assert spec["podSelector"] == {} and set(spec["policyTypes"]) == {"Ingress", "Egress"}
        assert "ingress" not in spec and "egress" not in spec

    def test_the_controllers_egress_is_dns_api_llm_and_pushgateway_only(self) -> None:
        """Allowed ports: 53 (DNS), 443/6443 (API server, LLM), 9091 (Pushgateway); metadata blocked."""
        (policy,) = [p for p in self._base("NetworkPolicy") if p["metadata"]["name"] == "controller-egress"]
        ports = {port["port"] for rule in policy["spec"]["egress"] for port in rule["ports"]}
        assert ports == {53, 443, 6443, 9091}
        blocks = [peer["ipBlock"] for rule in policy["spec"]["egress"] for peer in rule.get("to", [])
                  if "ipBlock" in peer]
        assert all("169.254.0.0/16" in block["except"] for block in blocks)


class TestJobs:
    def _job(self, name: str) -> dict[str, Any]:
        return next(o for o in load_base() if o["kind"] == "Job" and o["metadata"]["name"] == name)

    def test_the_indexed_job_runs_one_target_per_index_with_its_own_retries(self) -> None:
        """Indexed, backoffLimitPerIndex, FailIndex on exit 1/2, disruptions ignored, deadline, TTL."""
        spec = self._job("sandloop-run-targets")["spec"]
        assert spec["completionMode"] == "Indexed" and spec["backoffLimitPerIndex"] == 1
        rules = spec["podFailurePolicy"]["rules"]
        assert rules[0]["action"] == "FailIndex" and rules[0]["onExitCodes"]["values"] == [1, 2]
        assert rules[1] == {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
        assert spec["activeDeadlineSeconds"] > 0 and spec["ttlSecondsAfterFinished"] > 0
        assert "JOB_COMPLETION_INDEX" in " ".join(spec["template"]["spec"]["containers"][0]["command"])

    def test_the_single_target_job_never_retries_a_usage_error(self) -> None:
        """podFailurePolicy FailJob on exit 1 and 2; a small backoffLimit for infrastructure loss."""
        spec = self._job("sandloop-run-icici")["spec"]
        assert spec["podFailurePolicy"]["rules"][0] == {
            "action": "FailJob", "onExitCodes": {"containerName": "controller", "operator": "In", "values": [1, 2]}}
        assert spec["backoffLimit"] <= 2

    def test_render_points_every_controller_container_at_the_registry(self) -> None:
        """`k8s render --registry R`: controller images and the sandbox image settings carry R."""
        objects = deploy_objects(_settings(kubernetes={"registry": "reg.example/team"}))
        images = [c["image"] for o in objects if o["kind"] == "Job"
                  for c in o["spec"]["template"]["spec"]["containers"]]
        assert images and all(i.startswith("reg.example/team/sandloop/controller:") for i in images)
        settings_map = next(o for o in objects if o["metadata"]["name"] == "sandloop-settings")["data"]
        assert settings_map["SBX_KUBERNETES__REGISTRY"] == "reg.example/team"
        assert "python-parser" in yaml.safe_load(settings_map["SBX_KUBERNETES__IMAGE_TAGS"])

    def test_render_output_is_yaml_kubectl_can_read(self) -> None:
        """The rendered text parses back to the same objects."""
        settings = _settings()
        assert list(yaml.safe_load_all(render(settings, part="deploy"))) == deploy_objects(settings)


class TestKustomize:
    @pytest.mark.parametrize("folder", ["base", "overlays/gvisor"])
    def test_kubectl_kustomize_builds_and_the_result_validates(self, folder: str) -> None:
        """Where kubectl exists: `kubectl kustomize` builds base and overlay, every object validates,
        and the overlay gives sandbox Pods gVisor. (Skipped without kubectl: render covers the base.)"""
        import shutil
        import subprocess

        if shutil.which("kubectl") is None:
            pytest.skip("kubectl is not installed")
        built = subprocess.run(["kubectl", "kustomize", str(K8S / folder)], capture_output=True, text=True,
                               check=True, timeout=60).stdout
        objects = [o for o in yaml.safe_load_all(built) if o]
        assert {(o["kind"], o["metadata"]["name"]) for o in load_base()} <= {(o["kind"], o["metadata"]["name"])
                                                                             for o in objects}
        for obj in objects:
            kubernetes_validate.validate(obj, VERSIONS[-1], strict=True)
        settings_map = next(o for o in objects if o["metadata"]["name"] == "sandloop-settings")["data"]
        assert (settings_map.get("SBX_KUBERNETES__RUNTIME_CLASS_NAME") == "gvisor") is (folder != "base")


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a label selector (a Service's plain map, or matchLabels/matchExpressions) selects ``labels``."""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        selector = {"matchLabels": selector}
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In", "only In is used in deploy/k8s"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


class TestService:
    """The service's Deployment, Service, settings, secret, RBAC and policies, as docs/kubernetes.md says."""

    def _base(self, kind: str, name: str) -> dict[str, Any]:
        return next(o for o in load_base() if o["kind"] == kind and o["metadata"]["name"] == name)

    def _pod(self) -> dict[str, Any]:
        return self._base("Deployment", SERVICE)["spec"]["template"]

    def _container(self) -> dict[str, Any]:
        (container,) = self._pod()["spec"]["containers"]
        return container

    def _template_labels(self) -> dict[str, dict[str, str]]:
        """Pod template labels of every workload in the base and the token Job, by name."""
        return {o["metadata"]["name"]: o["spec"]["template"]["metadata"]["labels"]
                for o in load_base() + token_objects(_settings()) if o["kind"] in ("Deployment", "Job")}

    def test_two_replicas_serve_on_every_address_with_the_controller_image(self) -> None:
        """replicas 2, `controller serve --host 0.0.0.0`, the port named http; render fills in the image."""
        deployment = self._base("Deployment", SERVICE)
        assert deployment["spec"]["replicas"] == 2
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        container = self._container()
        assert container["command"][:4] == ["python3", "-m", "controller", "serve"]
        assert container["command"][container["command"].index("--host") + 1] == "0.0.0.0"
        port = container["command"][container["command"].index("--port") + 1]
        assert {"name": "http", "containerPort": int(port), "protocol": "TCP"} in container["ports"]
        rendered = next(o for o in deploy_objects(_settings(kubernetes={"registry": "reg.example/team"}))
                        if o["kind"] == "Deployment")
        assert rendered["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
            "reg.example/team/sandloop/controller:")

    def test_the_pod_is_restricted_read_only_and_bounded(self) -> None:
        """Non-root, no privilege escalation, ALL capabilities dropped, RuntimeDefault, read-only root,
        requests and limits, writable paths only on volumes."""
        pod = self._pod()["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        container = self._container()
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False and context["privileged"] is False
        assert context["readOnlyRootFilesystem"] is True and context["runAsNonRoot"] is True
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and {"cpu", "memory"} <= set(resources["limits"])
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert {"/tmp", "/sandloop/runs"} <= mounts

    def test_readiness_is_readyz_and_liveness_is_healthz_on_the_served_port(self) -> None:
        """The probes ask the service's own endpoints on the container's http port."""
        container = self._container()
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
        names = {p["name"] for p in container["ports"]}
        assert all(container[probe]["httpGet"]["port"] in names
                   for probe in ("readinessProbe", "livenessProbe", "startupProbe"))

    def test_the_service_selects_the_deployments_pods_and_nothing_else(self) -> None:
        """The ClusterIP Service's selector matches the Pod template (and the Deployment's selector
        does), and no Job's Pods, which must never receive the service's traffic."""
        service = self._base("Service", SERVICE)
        assert service["spec"]["type"] == "ClusterIP"
        deployment = self._base("Deployment", SERVICE)
        assert _selects(deployment["spec"]["selector"], self._pod()["metadata"]["labels"])
        selected = {name for name, labels in self._template_labels().items()
                    if _selects(service["spec"]["selector"], labels)}
        assert selected == {SERVICE}
        (port,) = service["spec"]["ports"]
        assert port["targetPort"] in {p["name"] for p in self._container()["ports"]}
        budget = self._base("PodDisruptionBudget", SERVICE)
        assert _selects(budget["spec"]["selector"], self._pod()["metadata"]["labels"])
        assert budget["spec"]["minAvailable"] < deployment["spec"]["replicas"]

    def test_settings_come_from_configmaps_and_only_the_dsns_from_a_secret(self) -> None:
        """envFrom the shared and the service's ConfigMaps; the required secrets are the store's DSN
        and the checkpoints' (the LLM key stays optional, as for the Jobs); no ConfigMap holds a DSN."""
        container = self._container()
        assert [e["configMapRef"]["name"] for e in container["envFrom"]] == ["sandloop-settings",
                                                                             "sandloop-service-settings"]
        secrets = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]
                   if "secretKeyRef" in e.get("valueFrom", {})}
        assert secrets["SBX_SERVICE__POSTGRES_DSN"] == {"name": "sandloop-postgres", "key": "dsn"}
        assert secrets["SBX_STATE_DSN"] == {"name": "sandloop-postgres", "key": "state-dsn"}
        assert {name for name, ref in secrets.items() if not ref.get("optional")} == {"SBX_SERVICE__POSTGRES_DSN",
                                                                                     "SBX_STATE_DSN"}
        assert not any("value" in e for e in container["env"])
        for name in ("sandloop-settings", "sandloop-service-settings"):
            assert not any("DSN" in key or "postgres://" in value or "postgresql://" in value
                           for key, value in self._base("ConfigMap", name)["data"].items())

    def test_the_service_settings_select_postgres_and_the_grace_outlasts_the_drain(
            self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The two ConfigMaps plus a DSN are valid Settings with the PostgreSQL store; the Pod's
        terminationGracePeriodSeconds covers uvicorn's 5 s stop, the drain and 10 s to record it."""
        for name in ("sandloop-settings", "sandloop-service-settings"):
            for key, value in self._base("ConfigMap", name)["data"].items():
                monkeypatch.setenv(key, value)
        monkeypatch.setenv("SBX_SERVICE__POSTGRES_DSN", "postgresql://u:p@sandloop-postgres:5432/sandloop")
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        assert settings.service.store == "postgres" and settings.sandbox_backend == "kubernetes"
        grace = self._pod()["spec"]["terminationGracePeriodSeconds"]
        assert grace >= 5 + settings.service.drain_seconds + 10

    def test_replicas_spread_over_nodes_on_a_volume_every_node_mounts(self) -> None:
        """Issue 34: the run folders' claim is ReadWriteMany and the Deployment's Pods prefer other nodes
        than their siblings' (preferred: a rollout's surge Pod still starts); the budget keeps one."""
        claim = self._base("PersistentVolumeClaim", "sandloop-runs")
        assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
        mounted = {v["persistentVolumeClaim"]["claimName"] for v in self._pod()["spec"]["volumes"]
                   if "persistentVolumeClaim" in v}
        assert mounted == {"sandloop-runs"}
        (term,) = self._pod()["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        assert _selects(term["podAffinityTerm"]["labelSelector"], self._pod()["metadata"]["labels"])
        assert "nodeSelector" not in self._pod()["spec"] and "nodeName" not in self._pod()["spec"]
        assert self._base("PodDisruptionBudget", SERVICE)["spec"]["minAvailable"] == 1

    def test_postgres_is_an_external_dependency_named_in_the_base(self) -> None:
        """An ExternalName Service, no StatefulSet or database Pod of our own."""
        postgres = self._base("Service", "sandloop-postgres")
        assert postgres["spec"]["type"] == "ExternalName" and postgres["spec"]["externalName"]
        assert not [o for o in load_base() if o["kind"] in ("StatefulSet", "PersistentVolume")]

    def test_the_service_account_has_the_jobs_rights_and_no_more(self) -> None:
        """sandloop-service is bound to the one sandbox Role beside the Jobs' account; no token by default."""
        account = self._base("ServiceAccount", SERVICE)
        assert account["automountServiceAccountToken"] is False
        assert self._pod()["spec"]["serviceAccountName"] == SERVICE
        bindings = [o for o in load_base() if o["kind"] == "RoleBinding"]
        subjects = {(s["name"], s["namespace"]) for b in bindings for s in b["subjects"]}
        assert subjects == {("sandloop-controller", "sandloop"), (SERVICE, "sandloop")}
        assert {b["roleRef"]["name"] for b in bindings} == {"sandloop-sandbox-runner"}

    def test_network_policies_let_clients_in_and_the_service_out_to_postgres(self) -> None:
        """Ingress 9466 to the service; its egress: the controller's (API, DNS, LLM) and 5432; the
        token Job reaches PostgreSQL and DNS only."""
        policies = [o for o in load_base() if o["kind"] == "NetworkPolicy" and o["metadata"]["namespace"] == "sandloop"]
        labels = self._template_labels()

        def ports(pod: str, direction: str) -> set[int]:
            return {port["port"] for p in policies if direction in p["spec"]["policyTypes"]
                    and _selects(p["spec"]["podSelector"], labels[pod])
                    for rule in p["spec"].get(direction.lower(), []) for port in rule["ports"]}

        assert ports(SERVICE, "Ingress") == {9466}
        assert ports(SERVICE, "Egress") == {53, 443, 6443, 9091, 5432}
        assert ports("sandloop-tokens-add", "Egress") == {53, 5432}
        assert ports("sandloop-run-icici", "Egress") == {53, 443, 6443, 9091}
        assert ports("sandloop-run-icici", "Ingress") == set()

    def test_the_token_job_renders_only_when_asked(self) -> None:
        """`k8s render --part tokens` is the one-off Job with the controller image; `all` never has it."""
        (job,) = token_objects(_settings(kubernetes={"registry": "reg.example/team"}))
        container = job["spec"]["template"]["spec"]["containers"][0]
        assert container["image"].startswith("reg.example/team/sandloop/controller:")
        assert container["command"][3:5] == ["tokens", "add"]
        assert job["spec"]["ttlSecondsAfterFinished"] > 0 and job["spec"]["backoffLimit"] == 0
        assert "sandloop-tokens-add" in render(_settings(), part="tokens")
        assert "sandloop-tokens-add" not in render(_settings(), part="all")
