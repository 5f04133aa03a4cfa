"""``SBX_KUBERNETES__*``: where and how sandbox Pods run when ``SBX_SANDBOX_BACKEND=kubernetes``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class KubernetesSettings(BaseModel):
    """The sandbox namespace, runtime class, image registry and how to reach the API server."""

    namespace: str = Field("sandloop-sandboxes", description="Namespace sandbox Pods and ConfigMaps are created in.")
    config: Literal["auto", "in-cluster", "kubeconfig"] = Field(
        "auto",
        description="How to reach the API server: in-cluster service account, a kubeconfig, "
                    "or auto (in-cluster when available).",
    )
    kubeconfig: Path | None = Field(
        None, description="kubeconfig file (default: the client's, ~/.kube/config or KUBECONFIG)."
    )
    context: str | None = Field(None, description="kubeconfig context (default: the current one).")
    registry: str = Field(
        "",
        description="Registry prefix of the images, e.g. registry.example.com/team; "
                    "empty: the local names (kind load).",
    )
    runtime_class_name: str | None = Field(
        None, description="RuntimeClass of sandbox Pods, e.g. gvisor or kata; unset: the node default."
    )
    image_pull_policy: Literal["IfNotPresent", "Always", "Never"] = Field(
        "IfNotPresent",
        description="Pull policy of sandbox containers (tags are content hashes, so IfNotPresent is safe).",
    )
    startup_seconds: float = Field(
        120.0, gt=0, le=3600,
        description="Time a Pod may take to be scheduled, pull and start before it counts as failed.",
    )
    poll_seconds: float = Field(0.5, gt=0, le=10, description="Interval between reads of a running Pod's status.")
    request_timeout_seconds: float = Field(10.0, gt=0, le=300, description="Limit of one API request.")
    frame_bytes: int = Field(
        8 << 20, ge=64 << 10, le=9 << 20,
        description="Most bytes of the collector's log read back (below the kubelet's 10 MiB log rotation).",
    )
    image_tags: dict[str, str] = Field(
        default_factory=dict,
        description="Local tag of each sandbox image by name, as `k8s render` wrote them; "
                    "unset names are computed here.",
    )
    controller_pod: str | None = Field(
        None,
        description="Name of the controller's own Pod (the Downward API sets it in-cluster); used as the owner label.",
    )

    @field_validator("namespace")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if not _DNS_LABEL.match(value):
            raise ValueError("kubernetes.namespace must be a DNS label such as sandloop-sandboxes")
        return value

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and ("://" in value or " " in value):
            raise ValueError("kubernetes.registry is a prefix like registry.example.com/team, without a scheme")
        return value

    def image_ref(self, local_tag: str) -> str:
        """The reference a Pod pulls for an image built locally as ``local_tag``."""
        return f"{self.registry}/{local_tag}" if self.registry else local_tag
