"""``python -m controller k8s render``: every object the deployment creates, and what one
sandbox execution creates, as YAML a user can read, diff and ``kubectl apply``.

The deployment objects are ``deploy/k8s/base`` (in its kustomization's order: the Jobs, the
service's Deployment and Service, ...) with the image references filled in: the controller
image's content tag and, in the settings ConfigMap, the registry prefix and the sandbox
images' content tags. The sandbox objects are the ConfigMap and Pod the Kubernetes backend
would send for one parser execution with the current settings (a placeholder parser and PDF
as inputs). The tokens part (``--part tokens``, never in ``all``: applying it makes a token) is
the one-off Job of ``deploy/k8s/tokens`` that creates the service's first token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from agents.ports.errors import ConfigError
from agents.registry import DEFAULT_AGENT, get_agent
from controller.platform.images.builder import available_images, image_spec
from controller.platform.images.controller_image import controller_tag
from controller.platform.sandbox.kubernetes.podspec import (
    input_configmap,
    now,
    pod_labels,
    sandbox_pod,
)
from controller.platform.settings import PROJECT_ROOT, Settings

BASE_DIR = PROJECT_ROOT / "deploy" / "k8s" / "base"
TOKENS_DIR = PROJECT_ROOT / "deploy" / "k8s" / "tokens"
CONTROLLER_IMAGE = "sandloop/controller"
SAMPLE_NAME = "sandloop-0123456789ab"


def load_base(base: Path = BASE_DIR) -> list[dict[str, Any]]:
    """The objects of the kustomize base, file by file in the kustomization's order."""
    try:
        kustomization = yaml.safe_load((base / "kustomization.yaml").read_text(encoding="utf-8"))
        return [doc for name in kustomization["resources"]
                for doc in yaml.safe_load_all((base / name).read_text(encoding="utf-8")) if doc]
    except (OSError, KeyError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the kustomize base in {base}: {exc}") from exc


def load_folder(folder: Path) -> list[dict[str, Any]]:
    """The objects of every YAML file in ``folder``, by file name."""
    try:
        return [doc for path in sorted(folder.glob("*.yaml"))
                for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the manifests in {folder}: {exc}") from exc


def sandbox_image_tags(settings: Settings) -> dict[str, str]:
    """Local content tag of every sandbox image, by name."""
    return {name: image_spec(name, settings).tag for name in available_images(settings)}


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj.get("spec") or {}
    template = (spec.get("jobTemplate") or {}).get("spec", spec).get("template") or {}
    pod = template.get("spec") or {}
    return [*pod.get("initContainers", []), *pod.get("containers", [])]


def _with_controller_image(objects: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """``objects`` with every container of the controller image pointed at its content tag."""
    controller_ref = settings.kubernetes.image_ref(controller_tag(settings.image_prefix))
    for obj in objects:
        for container in _containers(obj):
            if container.get("image") == CONTROLLER_IMAGE:
                container["image"] = controller_ref
    return objects


def deploy_objects(settings: Settings) -> list[dict[str, Any]]:
    """The base with image references and image settings filled in for ``settings``."""
    k8s = settings.kubernetes
    objects = _with_controller_image(load_base(), settings)
    for obj in objects:
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "sandloop-settings":
            data = obj["data"]
            data["SBX_KUBERNETES__REGISTRY"] = k8s.registry
            data["SBX_KUBERNETES__IMAGE_TAGS"] = json.dumps(sandbox_image_tags(settings), sort_keys=True)
            if k8s.runtime_class_name:
                data["SBX_KUBERNETES__RUNTIME_CLASS_NAME"] = k8s.runtime_class_name
    return objects


def sandbox_objects(settings: Settings) -> list[dict[str, Any]]:
    """The ConfigMap and Pod of one sample parser execution, exactly as the backend builds them."""
    agent = get_agent(DEFAULT_AGENT)
    if agent.info.sample is None:
        return []
    k8s = settings.kubernetes
    image = k8s.image_ref(image_spec(agent.info.images[0], settings).tag)
    labels = {"run_id": "20260101-000000-icici-0000", "agent": agent.name, "target": "icici", "attempt": "1"}
    spec = agent.info.sample(image, settings.sandbox, labels)
    pod_labels_ = pod_labels(spec, "sandloop-run-icici-abcde", now(), k8s.startup_seconds)
    return [input_configmap(SAMPLE_NAME, k8s.namespace, spec, pod_labels_),
            sandbox_pod(SAMPLE_NAME, k8s.namespace, spec, pod_labels_, user=settings.sandbox_user,
                        image_pull_policy=k8s.image_pull_policy, runtime_class_name=k8s.runtime_class_name,
                        frame_bytes=k8s.frame_bytes, startup_seconds=k8s.startup_seconds)]


def token_objects(settings: Settings) -> list[dict[str, Any]]:
    """The one-off Job that creates the service's first token, its image filled in."""
    return _with_controller_image(load_folder(TOKENS_DIR), settings)


def render(settings: Settings, *, part: str = "all") -> str:
    """YAML documents for ``part``: ``deploy``, ``sandbox``, ``all`` (both) or ``tokens``."""
    objects = []
    if part == "tokens":
        objects += token_objects(settings)
    if part in ("all", "deploy"):
        objects += deploy_objects(settings)
    if part in ("all", "sandbox"):
        objects += sandbox_objects(settings)
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False)


def command(args: Any, settings: Settings) -> int:
    """``k8s render``: print the YAML (``--registry`` reached the settings as an override)."""
    if args.part == "tokens":
        print("# the service's first token (kubectl apply -f, then read its log once): deploy/k8s/tokens")
        print(render(settings, part="tokens"), end="")
        return 0
    if args.part in ("all", "deploy"):
        print("# sandloop deployment (kubectl apply -f): deploy/k8s/base with image references filled in")
        print(render(settings, part="deploy"), end="")
    if args.part == "all":
        print("---")
    if args.part in ("all", "sandbox"):
        print("# one sandbox execution, as the controller creates it (do not apply: for reading and diffing)")
        print(render(settings, part="sandbox"), end="")
    return 0
