"""Prepare the exporter image's build context: ``python -m controller.observability.exporter_image DEST``.

``make stack`` runs this before ``docker compose build``: DEST (``deploy/images/exporter/wheels``)
gets sandloop's own wheel and every dependency as wheels for the image's interpreter
(Debian bookworm's CPython 3.11), pinned by ``constraints.txt``, plus a ``requirements.txt``.
The image build then installs from that folder alone, so it needs no package index (as
with the sandbox images, see :mod:`controller.images.wheelhouse`).
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from controller.errors import ImageBuildError, PlatformError
from controller.images.wheelhouse import WheelhouseSpec, engine_arch, ensure_wheelhouse
from controller.settings import PROJECT_ROOT, load_settings

DISTRIBUTION = "sandloop"


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
    shutil.copytree(wheels, dest)
    _build_own_wheel(dest)
    version = metadata.version(DISTRIBUTION)
    (dest / "requirements.txt").write_text(spec.requirements_txt + f"{DISTRIBUTION}=={version}\n", encoding="utf-8")
    return dest


def _build_own_wheel(dest: Path) -> None:
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
               "--wheel-dir", str(dest), str(PROJECT_ROOT)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise ImageBuildError(f"building the sandloop wheel failed: {tail}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: one argument, the destination folder."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m controller.observability.exporter_image DEST", file=sys.stderr)
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
