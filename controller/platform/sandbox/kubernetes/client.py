"""Connect to the API server (in-cluster or kubeconfig) and check the sandbox namespace is usable."""

from __future__ import annotations

import urllib3.exceptions
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from agents.ports.errors import EngineUnavailable
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.kubernetes.podspec import MANAGED_SELECTOR


class ClusterUnavailable(EngineUnavailable):
    """No Kubernetes API server answers, or it refuses us the sandbox namespace (exit 2)."""


def _api_client(settings: KubernetesSettings) -> client.ApiClient:
    mode = settings.config
    configuration = client.Configuration()
    if mode in ("auto", "in-cluster"):
        try:
            config.load_incluster_config(client_configuration=configuration)
            return _without_retries(configuration)
        except ConfigException:
            if mode == "in-cluster":
                raise
    kubeconfig = str(settings.kubeconfig) if settings.kubeconfig else None
    config.load_kube_config(config_file=kubeconfig, context=settings.context, client_configuration=configuration)
    return _without_retries(configuration)


def _without_retries(configuration: client.Configuration) -> client.ApiClient:
    # urllib3 would retry (and log each retry) on its own; the backend decides about retries.
    configuration.retries = False
    return client.ApiClient(configuration)


def connect(settings: KubernetesSettings) -> client.CoreV1Api:
    """A CoreV1Api that has listed the sandbox namespace's Pods once.

    Raises:
        ClusterUnavailable: no configuration, no answer, or no access to the namespace.
    """
    hint = "set a kubeconfig (SBX_KUBERNETES__KUBECONFIG) or use SBX_SANDBOX_BACKEND=docker; see docs/kubernetes.md"
    try:
        api = client.CoreV1Api(_api_client(settings))
    except (ConfigException, OSError, TypeError) as exc:
        raise ClusterUnavailable(f"no Kubernetes cluster configured ({str(exc).splitlines()[0][:160]})",
                                 hint=hint) from exc
    try:
        api.list_namespaced_pod(settings.namespace, label_selector=MANAGED_SELECTOR, limit=1,
                                _request_timeout=settings.request_timeout_seconds)
    except ApiException as exc:
        raise ClusterUnavailable(
            f"the Kubernetes API refused listing pods in {settings.namespace}: {exc.status} {exc.reason}",
            hint="apply deploy/k8s (namespace, Role, RoleBinding) or set SBX_KUBERNETES__NAMESPACE") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise ClusterUnavailable(f"no Kubernetes API server answers at {api.api_client.configuration.host}",
                                 hint=hint) from exc
    return api
