"""Sandbox images: named by a hash of their build context, built on demand.

Each folder of ``sandbox_images/`` with a Dockerfile is an image. Its tag is a content hash
of the folder, the pinned Python requirements and the base image, so editing a Dockerfile
or the entrypoint (or upgrading the controller's pandas) yields a new tag and a rebuild,
while an unchanged image is found and reused.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from agents.ports.errors import ImageBuildError, UsageError
from agents.ports.events import Say
from agents.ports.images import pin_requirements
from controller.platform.images.base import ensure_base_image, image_exists
from controller.platform.images.build_lock import building, lock_path
from controller.platform.images.wheelhouse import (
    WheelhouseSpec,
    engine_arch,
    ensure_wheelhouse,
)
from controller.platform.settings import PROJECT_ROOT, Settings

REQUIREMENTS_IN = "requirements.in"
HASH_LABEL = "org.sandloop.context-hash"


@dataclass(frozen=True)
class ImageSpec:
    """One sandbox image: its build folder, pinned requirements and the base it builds on."""

    name: str
    context_dir: Path
    base_image: str
    prefix: str
    requirements: tuple[str, ...] = ()

    @property
    def content_hash(self) -> str:
        """A digest of every file in the build folder, the requirements and the base name."""
        digest = hashlib.sha256()
        for path in _context_files(self.context_dir):
            digest.update(path.relative_to(self.context_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        digest.update("\n".join(self.requirements).encode() + b"\0" + self.base_image.encode())
        return digest.hexdigest()[:12]

    @property
    def tag(self) -> str:
        """The image reference, e.g. ``sandloop/python-parser:3f2a9c1d0b7e``."""
        return f"{self.prefix}/{self.name}:{self.content_hash}"


def image_spec(name: str, settings: Settings) -> ImageSpec:
    """Describe the image built from ``sandbox_images/<name>``."""
    context = settings.images_dir / name
    if not (context / "Dockerfile").is_file():
        known = ", ".join(available_images(settings)) or "none"
        raise UsageError(f"no sandbox image named {name!r} (known: {known})")
    requirements_in = context / REQUIREMENTS_IN
    requirements = pin_requirements(requirements_in) if requirements_in.exists() else ()
    return ImageSpec(name, context, settings.base_image, settings.image_prefix, requirements)


def available_images(settings: Settings) -> list[str]:
    """Names of the image folders that have a Dockerfile."""
    if not settings.images_dir.is_dir():
        return []
    return sorted(p.parent.name for p in settings.images_dir.glob("*/Dockerfile"))


def ensure_image(client: docker.DockerClient, spec: ImageSpec, settings: Settings, say: Say) -> str:
    """Return ``spec.tag``, building the image (and its base) first if the engine lacks it."""
    if image_exists(client, spec.tag):
        return spec.tag
    with building(lock_path(settings.cache_dir, spec.tag), say, spec.tag):
        if image_exists(client, spec.tag):  # another process built it while this one waited
            return spec.tag
        say(f"building image {spec.tag}")
        ensure_base_image(client, settings, say)
        with tempfile.TemporaryDirectory(prefix=f"sandloop-build-{spec.name}-") as staging:
            _stage_context(client, spec, settings, Path(staging))
            _build(client, spec, Path(staging), settings, say)
    return spec.tag


def _stage_context(
    client: docker.DockerClient, spec: ImageSpec, settings: Settings, staging: Path
) -> None:
    shutil.copytree(spec.context_dir, staging, dirs_exist_ok=True)
    if not spec.requirements:
        return
    arch = engine_arch(client.info().get("Architecture", "x86_64"))
    wheels = ensure_wheelhouse(
        WheelhouseSpec(spec.requirements, arch),
        settings.cache_dir,
        PROJECT_ROOT / "constraints.txt",
    )
    shutil.copytree(wheels, staging / "wheels", dirs_exist_ok=True)


def _build(
    client: docker.DockerClient, spec: ImageSpec, staging: Path, settings: Settings, say: Say
) -> None:
    build_context(client, staging, spec.tag, settings.base_image, spec.content_hash,
                  settings.build_timeout_seconds, say,
                  failure=lambda why: ImageBuildError(f"building {spec.tag} failed: {why}"))


def build_context(
    client: docker.DockerClient, context: Path, tag: str, base_image: str, content_hash: str,
    timeout: int, say: Say, failure: Callable[[str], ImageBuildError],
) -> None:
    """Build the folder ``context`` as ``tag`` FROM ``base_image``, saying each step.

    Raises:
        ImageBuildError: ``failure(why)``, with the engine's error and the build's last lines.
    """
    try:
        stream = client.api.build(
            path=str(context), tag=tag, rm=True, forcerm=True, pull=False, decode=True,
            buildargs={"BASE_IMAGE": base_image}, labels={HASH_LABEL: content_hash}, timeout=timeout,
        )
        _follow(stream, say, failure)
    except docker.errors.APIError as exc:
        raise failure(str(exc)) from exc


def _follow(stream: Iterator[dict[str, object]], say: Say, failure: Callable[[str], ImageBuildError]) -> None:
    tail: list[str] = []
    for chunk in stream:
        if "error" in chunk:
            detail = " | ".join(tail[-4:])
            raise failure(f"{str(chunk['error']).strip()[:300]} ({detail[:300]})")
        text = str(chunk.get("stream", "")).strip()
        if text:
            tail = (tail + [text])[-20:]
            if text.startswith("Step "):
                say(text)


def _context_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")
    )
