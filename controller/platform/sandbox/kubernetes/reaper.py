"""Delete sandbox Pods and ConfigMaps that outlived their expiry (a controller died mid-run).

Every object the backend creates carries ``org.sandloop.managed=1`` and
``org.sandloop.expires`` (creation + the Pod's deadline + grace): by then a live controller
has deleted it, so anything past it is a leftover, whoever created it. No owner liveness
check is needed, and none would work across nodes. (An ownerReference to the controller's
Pod would be neater, but Kubernetes refuses cross-namespace owners, and the sandboxes live
in their own namespace: see docs/kubernetes.md.)
"""

from __future__ import annotations

from collections.abc import Mapping

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException

from controller.platform.sandbox.kubernetes.podspec import EXPIRES, MANAGED_SELECTOR


def is_expired(labels: Mapping[str, str] | None, now: float) -> bool:
    """Whether an object's expiry label lies in the past (a missing or bad one counts as expired)."""
    value = (labels or {}).get(EXPIRES, "")
    return not value.isdigit() or int(value) < now


def reap_expired(api: CoreV1Api, namespace: str, now: float, timeout: float = 10.0) -> int:
    """Delete expired managed Pods, then ConfigMaps, in ``namespace``; return how many."""
    removed = 0
    kinds = ((api.list_namespaced_pod, api.delete_namespaced_pod),
             (api.list_namespaced_config_map, api.delete_namespaced_config_map))
    for list_, delete in kinds:
        for item in list_(namespace, label_selector=MANAGED_SELECTOR, _request_timeout=timeout).items:
            meta = item.metadata
            if meta is None or meta.name is None or not is_expired(meta.labels, now):
                continue
            try:
                delete(meta.name, namespace, grace_period_seconds=0, _request_timeout=timeout)
                removed += 1
            except ApiException as exc:
                if exc.status != 404:
                    raise
    return removed
