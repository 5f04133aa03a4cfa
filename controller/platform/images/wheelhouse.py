"""Python packages for image builds, downloaded on the host by the host's pip.

pip inside ``docker build`` may not reach a package index (here it cannot: TLS is
intercepted), so every image that needs Python packages gets them from a wheelhouse in its
build context. Requirements named in the image's ``requirements.in`` are pinned to the
version the controller itself runs, so pandas means the same on both sides; the rest follow
the project's ``constraints.txt``. Wheels are chosen for the image's interpreter and
platform (Debian bookworm: CPython 3.11, glibc 2.36), not the host's.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.ports.errors import ImageBuildError
from controller.platform.images.build_lock import building, lock_path

#: Interpreter of the images' Debian release (bookworm ships CPython 3.11).
IMAGE_PYTHON = "3.11"
#: glibc of bookworm is 2.36: wheels for that or older work.
_GLIBC_TAGS = ("manylinux_2_36", "manylinux_2_28", "manylinux_2_17", "manylinux2014")
COMPLETE_MARKER = ".complete"


@dataclass(frozen=True)
class WheelhouseSpec:
    """Which packages, for which image interpreter and CPU architecture."""

    requirements: tuple[str, ...]
    arch: str

    @property
    def requirements_txt(self) -> str:
        """The pinned requirements file written into the wheelhouse."""
        return "".join(f"{line}\n" for line in self.requirements)

    @property
    def key(self) -> str:
        """Content key: same requirements and platform, same wheelhouse."""
        digest = hashlib.sha256(f"{IMAGE_PYTHON}|{self.arch}|{self.requirements_txt}".encode())
        return digest.hexdigest()[:16]


def engine_arch(docker_arch: str) -> str:
    """Map the engine's architecture name to the one wheel tags use."""
    return {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
        docker_arch, docker_arch
    )


def ensure_wheelhouse(spec: WheelhouseSpec, cache_dir: Path, constraints: Path | None) -> Path:
    """Return a folder holding every wheel ``spec`` needs, downloading it once per key."""
    folder = cache_dir / "wheelhouse" / spec.key
    if (folder / COMPLETE_MARKER).exists():
        return folder
    with building(lock_path(cache_dir, f"wheelhouse-{spec.key}"), lambda _line: None, "its wheelhouse"):
        if not (folder / COMPLETE_MARKER).exists():  # else downloaded by another process meanwhile
            _download(spec, folder, constraints)
    return folder


def pip_download(folder: Path, arch: str, *options: str) -> list[str]:
    """The host pip's command that downloads the wheels of ``folder``'s requirements.txt into ``folder``,
    for the images' interpreter on ``arch`` (``options``: pip's own, such as ``--no-deps``)."""
    return [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", *options,
            "--only-binary=:all:", "--implementation", "cp",
            "--python-version", IMAGE_PYTHON, "--abi", f"cp{IMAGE_PYTHON.replace('.', '')}",
            *[arg for tag in _GLIBC_TAGS for arg in ("--platform", f"{tag}_{arch}")],
            "--dest", str(folder), "-r", str(folder / "requirements.txt")]


def _download(spec: WheelhouseSpec, folder: Path, constraints: Path | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.txt").write_text(spec.requirements_txt, encoding="utf-8")
    command = pip_download(folder, spec.arch)
    if constraints is not None and constraints.exists():
        command += ["-c", str(constraints)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise ImageBuildError(
            f"downloading the image's Python packages failed: {tail}",
            hint="the host's pip must reach a package index (or set PIP_INDEX_URL/PIP_FIND_LINKS)",
        )
    (folder / COMPLETE_MARKER).touch()
