"""The controller image (``deploy/images/controller/``): its content tag and its build context.

The image holds sandloop (a wheel), its pinned dependencies (a host-built wheelhouse, as for
the exporter image: no package index at build time), the sandbox images' build folders (so
the controller can name their content tags) and ``data/`` (the targets). Its tag is a
digest of everything that goes in, like the sandbox images' tags.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from controller.platform.observability.exporter_image import prepare as prepare_wheels
from controller.platform.settings import PROJECT_ROOT

NAME = "controller"
CONTEXT = PROJECT_ROOT / "deploy" / "images" / NAME
#: What the image is made of, relative to the project root.
SOURCES = ("pyproject.toml", "constraints.txt", "controller", "agents", "sandbox_images", "data",
           "deploy/images/controller/Dockerfile")


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    skip = ("__pycache__", "wheels", ".pyc")
    return sorted(p for p in root.rglob("*") if p.is_file() and not any(s in p.as_posix() for s in skip))


def controller_tag(prefix: str, root: Path = PROJECT_ROOT) -> str:
    """``<prefix>/controller:<hash>``: a digest of every file the image is built from."""
    digest = hashlib.sha256()
    for source in SOURCES:
        for path in _files(root / source):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{prefix}/{NAME}:{digest.hexdigest()[:12]}"


def prepare(cache_dir: Path, dest: Path = CONTEXT) -> Path:
    """Fill the build context: wheels/ (dependencies and sandloop's wheel), sandbox_images/, data/."""
    prepare_wheels(dest / "wheels", cache_dir)
    for folder in ("sandbox_images", "data"):
        target = dest / "wheels" / folder
        shutil.copytree(PROJECT_ROOT / folder, target,
                        ignore=shutil.ignore_patterns("__pycache__", "wheels", "*.tar.gz"))
    return dest
