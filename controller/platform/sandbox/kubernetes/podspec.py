"""The objects one sandbox execution creates: a Pod and the ConfigMap holding its inputs (pure).

The Pod has two containers from the same image. The init container ``program`` runs the
spec's command under the in-Pod launcher (``/opt/sandloop/k8s_pod.py launch``), with the
inputs mounted read-only at ``/work/in`` and two size-limited ``emptyDir``s at ``/tmp`` and
``/work/out``. The main container ``collector`` mounts ``/work/out`` read-only and frames
the status, streams and expected files into its own log (see :mod:`.frame`). Both follow
Pod Security ``restricted`` and then some (read-only root, no token, no service links).

Objects are plain dicts in the API's JSON shape: what ``k8s render`` prints is exactly
what the backend sends.
"""

from __future__ import annotations

import base64
import math
import re
import time
from collections.abc import Mapping
from typing import Any

from agents.ports.errors import UsageError
from agents.ports.sandbox import INPUT_DIR, OUTPUT_DIR, SCRATCH_DIR, SandboxSpec
from controller.platform.sandbox.labels import PREFIX

#: The in-Pod program (sandbox_images/python-parser/k8s_pod.py) inside the image.
POD_PROGRAM = "/opt/sandloop/k8s_pod.py"
PROGRAM, COLLECTOR = "program", "collector"
#: What a ConfigMap can hold (the API server's 1 MiB object limit, less room for metadata).
CONFIGMAP_MAX_BYTES = 1_000_000
#: Seconds the Pod may live beyond the program's timeout: start, collect, kill.
DEADLINE_GRACE_SECONDS = 30
EXPIRES = f"{PREFIX}expires"
MANAGED_SELECTOR = f"{PREFIX}managed=1"
_COLLECTOR_MEMORY_MI, _COLLECTOR_CPU = 128, "250m"
_LABEL_VALUE_BAD = re.compile(r"[^A-Za-z0-9._-]+")


class InputsTooLarge(UsageError):
    """The inputs exceed what one ConfigMap can carry into a Pod."""


def label_value(value: object) -> str:
    """A Kubernetes label value: [A-Za-z0-9._-], at most 63 chars, alphanumeric at both ends."""
    text = _LABEL_VALUE_BAD.sub("-", str(value))[:63]
    return text.strip("-._") or "none"


def pod_labels(spec: SandboxSpec, owner: str, now: float, startup_seconds: float = 120.0) -> dict[str, str]:
    """The ``org.sandloop.*`` labels: managed, owner, created, expires, and the spec's own.

    ``expires`` lies past the latest moment a live controller could still be waiting for
    the Pod, so the reaper never takes live work.
    """
    expires = int(now + pod_deadline_seconds(spec, startup_seconds) + DEADLINE_GRACE_SECONDS)
    labels = {f"{PREFIX}managed": "1", f"{PREFIX}owner": label_value(owner),
              f"{PREFIX}created": str(int(now)), EXPIRES: str(expires)}
    labels.update({f"{PREFIX}{key}": label_value(value) for key, value in spec.labels.items()})
    return labels


def pod_deadline_seconds(spec: SandboxSpec, startup_seconds: float = 120.0) -> int:
    """``activeDeadlineSeconds``: a backstop past the launcher's own timeout.

    It counts from the kubelet's acceptance, image pull included, so it allows the startup
    time as well as the program's timeout and time to collect; the program itself is held
    to its timeout by the in-Pod launcher.
    """
    return math.ceil(spec.limits.timeout_seconds) + DEADLINE_GRACE_SECONDS + math.ceil(startup_seconds)


def input_configmap(name: str, namespace: str, spec: SandboxSpec, labels: Mapping[str, str]) -> dict[str, Any]:
    """The ConfigMap carrying ``spec.inputs`` as binaryData (one key per file).

    Raises:
        InputsTooLarge: the inputs, base64-encoded, would not fit in one ConfigMap.
    """
    encoded = {key: base64.b64encode(value).decode("ascii") for key, value in spec.inputs.items()}
    size = sum(len(v) for v in encoded.values())
    if size > CONFIGMAP_MAX_BYTES:
        raw = sum(len(v) for v in spec.inputs.values())
        raise InputsTooLarge(
            f"the sandbox inputs are {raw} bytes ({size} encoded); a Kubernetes sandbox takes at most "
            f"{CONFIGMAP_MAX_BYTES} encoded bytes (one ConfigMap)",
            hint="use a smaller PDF, or SBX_SANDBOX_BACKEND=docker",
        )
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "immutable": True, "binaryData": encoded}


def _security_context() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}


def _resources(memory_mi: int, cpu: str, storage_mi: int) -> dict[str, Any]:
    amounts = {"memory": f"{memory_mi}Mi", "cpu": cpu, "ephemeral-storage": f"{storage_mi}Mi"}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _cpu(cores: float) -> str:
    return f"{max(1, round(cores * 1000))}m"


def _program_container(spec: SandboxSpec, image: str, pull: str, out_mi: int) -> dict[str, Any]:
    limits = spec.limits
    launcher = ["python3", "-I", POD_PROGRAM, "launch", "--timeout", str(limits.timeout_seconds),
                "--fsize", str(limits.file_size_mb << 20), "--nofile", str(limits.open_files),
                "--output-bytes", str(limits.output_bytes), "--"]
    container: dict[str, Any] = {
        "name": PROGRAM, "image": image, "imagePullPolicy": pull,
        "command": [*launcher, *spec.command],
        "securityContext": _security_context(),
        "resources": _resources(limits.memory_mb, _cpu(limits.cpus), out_mi + limits.tmpfs_mb + 64),
        "volumeMounts": [{"name": "in", "mountPath": INPUT_DIR, "readOnly": True},
                         {"name": "out", "mountPath": OUTPUT_DIR},
                         {"name": "tmp", "mountPath": SCRATCH_DIR}],
        "terminationMessagePolicy": "File",
    }
    if spec.env:
        container["env"] = [{"name": k, "value": v} for k, v in sorted(spec.env.items())]
    return container


def _collector_container(spec: SandboxSpec, image: str, pull: str, frame_bytes: int) -> dict[str, Any]:
    limits = spec.limits
    command = ["python3", "-I", POD_PROGRAM, "collect", "--output-bytes", str(limits.output_bytes),
               "--collect-bytes", str(limits.collect_bytes), "--frame-bytes", str(frame_bytes),
               "--", *spec.collect]
    return {
        "name": COLLECTOR, "image": image, "imagePullPolicy": pull, "command": command,
        "securityContext": _security_context(),
        "resources": _resources(_COLLECTOR_MEMORY_MI, _COLLECTOR_CPU, 32),
        "volumeMounts": [{"name": "out", "mountPath": OUTPUT_DIR, "readOnly": True}],
        "terminationMessagePolicy": "File",
    }


def sandbox_pod(
    name: str, namespace: str, spec: SandboxSpec, labels: Mapping[str, str], *,
    user: str, image_pull_policy: str = "IfNotPresent", runtime_class_name: str | None = None,
    frame_bytes: int = 8 << 20, startup_seconds: float = 120.0,
) -> dict[str, Any]:
    """The Pod of one execution (see the module docstring); ``spec.image`` is the full reference."""
    uid, _, gid = user.partition(":")
    out_mi = spec.limits.file_size_mb * 2
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": pod_deadline_seconds(spec, startup_seconds),
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "hostNetwork": False, "hostPID": False, "hostIPC": False,
        "shareProcessNamespace": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": int(uid), "runAsGroup": int(gid),
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "initContainers": [_program_container(spec, spec.image, image_pull_policy, out_mi)],
        "containers": [_collector_container(spec, spec.image, image_pull_policy, frame_bytes)],
        "volumes": [
            {"name": "in", "configMap": {"name": name, "defaultMode": 0o444}},
            {"name": "out", "emptyDir": {"sizeLimit": f"{out_mi}Mi"}},
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": f"{spec.limits.tmpfs_mb}Mi"}},
        ],
    }
    if runtime_class_name:
        pod_spec["runtimeClassName"] = runtime_class_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": pod_spec}


def now() -> float:
    """The clock labels use (a function so tests can read it)."""
    return time.time()
