"""Run a rendered sandbox Pod on the Docker engine, with the Pod's settings translated.

Test double for the kubelet, for what cannot exist here (no cluster): the same image, the
same commands and the same order (init container ``program`` to completion, then the
``collector``), with each Pod setting mapped to its Docker equivalent: ``runAsUser``/
``runAsGroup`` → user, ``readOnlyRootFilesystem`` → read-only root, ``capabilities.drop:
[ALL]`` → cap_drop ALL, ``allowPrivilegeEscalation: false`` → no-new-privileges, memory and
CPU limits, the ``Memory`` emptyDir → tmpfs, the disk emptyDir → a named volume shared by
both containers, the ConfigMap → a volume holding the inputs (root-owned, 0444) mounted
read-only, and no network (the sandbox NetworkPolicy denies everything).
"""

from __future__ import annotations

import base64
import io
import tarfile
import uuid
from dataclasses import dataclass
from typing import Any

import docker
from docker.types import Mount

from controller.platform.sandbox.labels import managed_labels
from tests.owner import TEST_OWNER


@dataclass
class PodRun:
    """What the Pod left: each container's exit code and the collector's stdout (its log)."""

    program_exit: int
    program_log: bytes
    collector_exit: int
    collector_log: bytes
    program_oom: bool


def _memory(value: str) -> str:
    return value.replace("Mi", "m").replace("Gi", "g")


def _cpus(value: str) -> int:
    return int(float(value[:-1]) * 1e6) if value.endswith("m") else int(float(value) * 1e9)


def _inputs_archive(configmap: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, encoded in configmap["binaryData"].items():
            data = base64.b64decode(encoded)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o444
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _mounts(container: dict[str, Any], volumes: dict[str, str], pod: dict[str, Any]) -> tuple[list[Mount], dict]:
    mounts, tmpfs = [], {}
    sources = {v["name"]: v for v in pod["spec"]["volumes"]}
    for mount in container["volumeMounts"]:
        source = sources[mount["name"]]
        if source.get("emptyDir", {}).get("medium") == "Memory":
            size = source["emptyDir"]["sizeLimit"].replace("Mi", "m")
            tmpfs[mount["mountPath"]] = f"size={size},mode=1777"
        else:
            mounts.append(Mount(mount["mountPath"], volumes[mount["name"]], type="volume",
                                read_only=bool(mount.get("readOnly"))))
    return mounts, tmpfs


def _run(client: docker.DockerClient, pod: dict[str, Any], container: dict[str, Any],
         volumes: dict[str, str], labels: dict[str, str]) -> tuple[int, bytes, bool]:
    security, limits = container["securityContext"], container["resources"]["limits"]
    pod_context = pod["spec"]["securityContext"]
    assert security["capabilities"] == {"drop": ["ALL"]} and security["allowPrivilegeEscalation"] is False
    mounts, tmpfs = _mounts(container, volumes, pod)
    created = client.containers.create(
        container["image"], command=container["command"],
        user=f"{pod_context['runAsUser']}:{pod_context['runAsGroup']}",
        read_only=security["readOnlyRootFilesystem"], cap_drop=["ALL"], security_opt=["no-new-privileges"],
        network_mode="none", mem_limit=_memory(limits["memory"]), memswap_limit=_memory(limits["memory"]),
        nano_cpus=_cpus(limits["cpu"]), pids_limit=256, mounts=mounts, tmpfs=tmpfs, labels=labels,
        environment={e["name"]: e["value"] for e in container.get("env", [])},
        name=f"sandloop-pod-{container['name']}-{uuid.uuid4().hex[:8]}")
    try:
        created.start()
        status = created.wait(timeout=300)
        log = created.logs(stdout=True, stderr=False)
        created.reload()
        return status["StatusCode"], log, bool(created.attrs["State"].get("OOMKilled"))
    finally:
        created.remove(force=True)


def run_pod(client: docker.DockerClient, configmap: dict[str, Any], pod: dict[str, Any]) -> PodRun:
    """Run ``pod`` (with ``configmap`` as its inputs) as the kubelet would, then remove everything."""
    labels = managed_labels(TEST_OWNER, {"agent": "pytest-k8s"})
    volumes = {name: client.volumes.create(f"sandloop-pod-{name}-{uuid.uuid4().hex[:8]}", labels=labels).name
               for name in ("in", "out")}
    try:
        loader = client.containers.create(pod["spec"]["initContainers"][0]["image"], command=["true"],
                                          mounts=[Mount("/work/in", volumes["in"], type="volume")],
                                          labels=labels, network_mode="none")
        try:
            loader.put_archive("/work/in", _inputs_archive(configmap))
        finally:
            loader.remove(force=True)
        program_exit, program_log, oom = _run(client, pod, pod["spec"]["initContainers"][0], volumes, labels)
        collector_exit, collector_log, _ = _run(client, pod, pod["spec"]["containers"][0], volumes, labels)
        return PodRun(program_exit, program_log, collector_exit, collector_log, oom)
    finally:
        for name in volumes.values():
            client.volumes.get(name).remove(force=True)
