"""The idris2 sandbox image: found, built, or refused in seconds with one clear line.

Building it means bootstrapping Idris2 0.8.0 from source (20-40 minutes), and its source is
either a local archive next to the Dockerfile or a download from GitHub. Before starting a
build that could only fail after minutes of apt-get and a failed fetch, this checks that one
of the two is there: a gzip archive at ``sandbox_images/idris2/idris2-0.8.0.tar.gz``, or the
Dockerfile's ``IDRIS2_URL`` answering a HEAD request within a few seconds. If neither, it
raises :class:`ImageSourceMissing` (exit 2) saying where to put the archive.

The archive is not part of the image's tag: the Dockerfile pins its SHA-256, so an image
built from the local archive and one built from the download are the same image, and
deleting the archive after a build does not make the image look missing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
import requests

#: The image folder (sandbox_images/idris2) whose build needs the Idris2 source archive.
IMAGE_NAME = "idris2"
from agents.ports.errors import ImageBuildError, ImageSourceMissing
from agents.ports.events import Say
from controller.platform.images.builder import ImageSpec, ensure_image, image_spec
from controller.platform.settings import Settings

SOURCE_ARCHIVE = "idris2-0.8.0.tar.gz"
PROBE_SECONDS = 5.0
_URL_ARG = re.compile(r"^ARG IDRIS2_URL=(?P<url>\S+)\s*$", re.M)
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class IdrisImageSpec(ImageSpec):
    """The idris2 image's spec: its tag hashes the build folder *except* the source archive."""

    @property
    def content_hash(self) -> str:
        """A digest of the Dockerfile, the entrypoint and the base image (not the archive)."""
        digest = hashlib.sha256()
        for path in sorted(p for p in self.context_dir.rglob("*") if p.is_file() and p.name != SOURCE_ARCHIVE):
            digest.update(path.relative_to(self.context_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        digest.update(self.base_image.encode())
        return digest.hexdigest()[:12]


def idris_image_spec(settings: Settings) -> IdrisImageSpec:
    """The spec of ``sandbox_images/idris2``."""
    base = image_spec(IMAGE_NAME, settings)
    return IdrisImageSpec(base.name, base.context_dir, base.base_image, base.prefix, base.requirements)


def source_url(context_dir: Path) -> str:
    """The download URL the Dockerfile would use (its ``ARG IDRIS2_URL`` default)."""
    match = _URL_ARG.search((context_dir / "Dockerfile").read_text(encoding="utf-8"))
    if match is None:
        raise ImageBuildError(f"{context_dir / 'Dockerfile'} has no ARG IDRIS2_URL=... line")
    return match["url"]


def ensure_idris_image(client: docker.DockerClient, settings: Settings, say: Say,
                       probe: Callable[[str], bool] | None = None) -> str:
    """The idris2 image's tag, building it when its source is at hand.

    Raises:
        ImageSourceMissing: no image, no local archive and the download URL does not answer.
        ImageBuildError: the build itself failed.
    """
    spec = idris_image_spec(settings)
    try:
        client.images.get(spec.tag)
        return spec.tag
    except docker.errors.ImageNotFound:
        pass
    say(f"the idris2 image {spec.tag} is not built yet; {_source_note(spec.context_dir, probe or url_answers)}")
    return ensure_image(client, spec, settings, say)


def _source_note(context_dir: Path, probe: Callable[[str], bool]) -> str:
    archive = context_dir / SOURCE_ARCHIVE
    if archive.is_file():
        with archive.open("rb") as handle:
            if handle.read(2) != _GZIP_MAGIC:
                raise ImageSourceMissing(f"{archive} is not a gzip archive",
                                         hint="replace it with the Idris2 0.8.0 release tarball (.tar.gz)")
        return f"building it from {archive} (Idris2 bootstraps from source: 20-40 minutes, once)"
    url = source_url(context_dir)
    if probe(url):
        return f"building it, downloading {url} (Idris2 bootstraps from source: 20-40 minutes, once)"
    shown = _shown(archive)
    raise ImageSourceMissing(
        f"the idris2 sandbox image is not built and cannot be: no Idris2 source at {shown}, and {url} does not answer",
        hint=f"download {url} where you have internet access, save it as {shown}, then run make images",
    )


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it is below it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def url_answers(url: str) -> bool:
    """Whether ``url`` answers a HEAD request (following redirects) within a few seconds."""
    try:
        response = requests.head(url, allow_redirects=True, timeout=PROBE_SECONDS)
    except requests.RequestException:
        return False
    return response.status_code < 400
