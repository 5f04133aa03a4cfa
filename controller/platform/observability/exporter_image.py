"""Prepare the exporter image's build context: ``python -m controller.platform.observability.exporter_image DEST``.

``make stack`` runs this before ``docker compose build``: DEST (``deploy/images/exporter/wheels``)
gets every dependency as wheels for the image's interpreter (Debian bookworm's CPython
3.11), pinned by ``constraints.txt``, with a ``requirements.txt``; ``DEST/own`` gets
sandloop's own wheel. The image build installs from that folder alone, so it needs no
package index (as with the sandbox images, see :mod:`controller.platform.images.wheelhouse`). The
dependencies are one image layer and sandloop another, so a code change rebuilds only the
small one, and the wheel is built with a fixed timestamp so unchanged code hits the cache.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from agents.ports.errors import ImageBuildError, PlatformError
from controller.platform.images.wheelhouse import WheelhouseSpec, engine_arch, ensure_wheelhouse
from controller.platform.settings import PROJECT_ROOT, load_settings


def runtime_requirements(pyproject: Path = PROJECT_ROOT / "pyproject.toml") -> tuple[str, ...]:
    """sandloop's own dependencies from pyproject.toml (no extras), and pip for the image."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return tuple(project.get("dependencies", [])) + ("pip",)


def prepare(dest: Path, cache_dir: Path) -> Path:
    """Fill ``dest`` with the wheelhouse and sandloop's wheel; return ``dest``.

    Raises:
        ImageBuildError: a download or the wheel build failed.
    """
    spec = WheelhouseSpec(runtime_requirements(), engine_arch(platform.machine()))
    wheels = ensure_wheelhouse(spec, cache_dir, PROJECT_ROOT / "constraints.txt")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(wheels, dest, ignore=shutil.ignore_patterns(".complete"))
    _build_own_wheel(dest / "own")
    return dest


def _build_own_wheel(dest: Path) -> None:
    # Built from a copy of the sources, so setuptools' build/ and egg-info never land in the checkout.
    with tempfile.TemporaryDirectory(prefix="sandloop-wheel-") as tmp:
        source = Path(tmp) / "src"
        _copy_sources(source)
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
                   "--wheel-dir", str(dest.resolve()), str(source)]
        # A fixed SOURCE_DATE_EPOCH makes the wheel's bytes depend on the code only.
        env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}
        proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise ImageBuildError(f"building the sandloop wheel failed: {tail}")


def _copy_sources(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(PROJECT_ROOT / name, dest / name)
    for package in ("controller", "agents"):
        shutil.copytree(PROJECT_ROOT / package, dest / package, ignore=ignore)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: one argument, the destination folder."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m controller.platform.observability.exporter_image DEST", file=sys.stderr)
        return 2
    try:
        dest = prepare(Path(args[0]), load_settings().cache_dir)
    except PlatformError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    print(f"==> exporter build context ready: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
