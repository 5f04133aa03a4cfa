"""Environment images: the python-parser image plus one resolved set of packages.

``FROM`` the python-parser image (so every environment runs the SAME entrypoint), a venv at
``/opt/sandloop/env`` that sees the base's packages underneath (``--system-site-packages``)
and holds the resolved set, which wins over them; the submission finder (``.pth``) and the
judge. The tag is a hash of the base tag, the pins, the Debian packages and these files:
equal sets share one image, and an image the engine has is never rebuilt.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import docker

from agents.ports.environments import ENV_IMAGE_NAME as IMAGE_NAME
from agents.ports.environments import JUDGE_DIR
from controller.platform.environments.resolution import EnvironmentFailure
from controller.platform.images.builder import build_context
from controller.platform.images.wheelhouse import COMPLETE_MARKER
from controller.platform.settings import PROJECT_ROOT

ENV_PREFIX = "/opt/sandloop/env"
SITE = f"{ENV_PREFIX}/lib/python3.11/site-packages"
_FILES = Path(__file__).resolve().parent / "files"
#: name in the build context -> file it comes from (the judge reuses the controller's decoder).
CONTEXT_FILES = {
    "sandloop_submission.py": _FILES / "sandloop_submission.py",
    "sandloop-submission.pth": _FILES / "sandloop-submission.pth",
    "judge/judge.py": _FILES / "judge.py",
    "judge/frame_codec.py": PROJECT_ROOT / "agents" / "bank_parser" / "frame_codec.py",
    "judge/compare.py": PROJECT_ROOT / "agents" / "bank_parser" / "compare.py",
    # frame_codec.py imports these two (agents/__init__.py is empty): the judge needs them beside it
    "judge/agents/__init__.py": PROJECT_ROOT / "agents" / "__init__.py",
    "judge/agents/bounded_json.py": PROJECT_ROOT / "agents" / "bounded_json.py",
    "judge/agents/untrusted_text.py": PROJECT_ROOT / "agents" / "untrusted_text.py",
}
_PATH = f"{ENV_PREFIX}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class EnvImageSpec:
    """One environment image: its base, its pins and Debian packages."""

    base_tag: str
    pins: tuple[str, ...]
    debian: tuple[str, ...]
    prefix: str

    @property
    def dockerfile(self) -> str:
        """The Dockerfile text (part of the content hash)."""
        return dockerfile(self.debian)

    @property
    def content_hash(self) -> str:
        """Digest of everything the image is made of."""
        digest = hashlib.sha256()
        for part in (self.base_tag, "\n".join(self.pins), "\n".join(self.debian), self.dockerfile):
            digest.update(part.encode() + b"\0")
        for name, source in sorted(CONTEXT_FILES.items()):
            digest.update(name.encode() + b"\0" + source.read_bytes() + b"\0")
        return digest.hexdigest()[:12]

    @property
    def tag(self) -> str:
        """E.g. ``sandloop/python-parser-env:1a2b3c4d5e6f``."""
        return f"{self.prefix}/{IMAGE_NAME}:{self.content_hash}"


def dockerfile(debian: tuple[str, ...]) -> str:
    """The environment's Dockerfile: one RUN (layers are costly on fuse-overlayfs) that adds the
    Debian packages, the venv with its wheels, the submission finder and the judge."""
    apt = (
        "apt-get update && apt-get install -y --no-install-recommends "
        + " ".join(debian) + " && rm -rf /var/lib/apt/lists/* && "
        if debian else ""
    )
    return (
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nUSER root\n"
        "COPY . /tmp/context/\n"
        f"RUN {apt}python3 -m venv --without-pip --system-site-packages {ENV_PREFIX} \\\n"
        "    && if [ -s /tmp/context/wheels/requirements.txt ]; then \\\n"
        f"       {ENV_PREFIX}/bin/python3 -m pip install --quiet --no-index --no-cache-dir \\\n"
        "         --disable-pip-version-check --ignore-installed --no-deps \\\n"
        "         --find-links /tmp/context/wheels -r /tmp/context/wheels/requirements.txt; fi \\\n"
        f"    && cp /tmp/context/sandloop_submission.py /tmp/context/sandloop-submission.pth {SITE}/ \\\n"
        f"    && mkdir -p {JUDGE_DIR} && cp -r /tmp/context/judge/. {JUDGE_DIR}/ \\\n"
        "    && rm -rf /tmp/context \\\n"
        f"    && {ENV_PREFIX}/bin/python3 -I -c "
        f"\"import sys, pandas, pdfplumber; assert sys.prefix == '{ENV_PREFIX}'\"\n"
        f"ENV PATH={_PATH}\n"
        "USER 10001:10001\n"
    )


def build_env_image(client: docker.DockerClient, spec: EnvImageSpec, wheels: Path | None, timeout: int) -> None:
    """Build ``spec`` from ``wheels`` (None: no packages of its own); provision.py says one line for it.

    Raises:
        EnvironmentFailure: the build failed (a wheel that does not install, a Debian package).
    """
    with tempfile.TemporaryDirectory(prefix="sandloop-env-") as folder:
        staging = Path(folder)
        _stage(spec, wheels, staging)
        build_context(client, staging, spec.tag, spec.base_tag, spec.content_hash, timeout,
                      lambda _step: None,
                      failure=lambda why: EnvironmentFailure(f"building its image failed: {why}"))


def _stage(spec: EnvImageSpec, wheels: Path | None, staging: Path) -> None:
    (staging / "Dockerfile").write_text(spec.dockerfile, encoding="utf-8")
    (staging / "wheels").mkdir()
    if wheels is not None:
        for item in wheels.iterdir():
            if item.name != COMPLETE_MARKER:
                shutil.copy2(item, staging / "wheels" / item.name)
    else:
        (staging / "wheels" / "requirements.txt").write_text("", encoding="utf-8")
    for name, source in CONTEXT_FILES.items():
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, staging / name)

