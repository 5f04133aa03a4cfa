"""Pin a declared set of requirements with uv, for the image's interpreter, as of a date.

uv (``uv pip compile``) resolves for another interpreter and platform than the host's
(CPython 3.11 on glibc 2.36, Debian bookworm's) and supports ``--exclude-newer``: with a
date, unpinned requirements resolve to what was current then, so 2025 code meets 2025
libraries. Only wheels are considered (``--only-binary :all:``): nothing is built, so
nothing of a package runs on the host. Results are cached by content under
``<cache>/environments/resolved/``.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agents.ports.errors import ImageBuildError
from controller.platform.images.wheelhouse import IMAGE_PYTHON

#: What every environment must hold besides its own packages: the entrypoint imports both.
CONTRACT_REQUIREMENTS = ("pandas", "pdfplumber")
#: glibc of Debian bookworm.
IMAGE_GLIBC = "2_36"
RESOLVE_TIMEOUT_SECONDS = 300


class EnvironmentFailure(ImageBuildError):
    """A declared environment cannot be resolved, downloaded or built: its owner's failure only."""


@dataclass(frozen=True)
class Resolution:
    """A declared set pinned: ``name==version`` lines, sorted."""

    pins: tuple[str, ...]
    as_of: str | None


def resolve(requirements: tuple[str, ...], as_of: str | None, arch: str, cache_dir: Path) -> Resolution:
    """Pin ``requirements`` plus the contract's packages; cached per (set, date, platform).

    Raises:
        EnvironmentFailure: uv finds no solution (or none with wheels for the image).
    """
    wanted = tuple(sorted({*requirements, *CONTRACT_REQUIREMENTS}, key=str.lower))
    lines = "\n".join(wanted)
    key = hashlib.sha256(f"{IMAGE_PYTHON}|{arch}|{as_of}|{lines}".encode()).hexdigest()[:16]
    cached = cache_dir / "environments" / "resolved" / f"{key}.txt"
    if cached.is_file():
        return Resolution(tuple(cached.read_text(encoding="utf-8").split()), as_of)
    pins = _compile(wanted, as_of, arch)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_text("\n".join(pins) + "\n", encoding="utf-8")
    tmp.replace(cached)
    return Resolution(pins, as_of)


def _compile(wanted: tuple[str, ...], as_of: str | None, arch: str) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory(prefix="sandloop-resolve-") as folder:
        source = Path(folder) / "requirements.in"
        source.write_text("\n".join(wanted) + "\n", encoding="utf-8")
        command = [
            _uv(), "pip", "compile", str(source), "--quiet", "--no-header", "--no-annotate",
            "--python-version", IMAGE_PYTHON, "--python-platform", f"{arch}-manylinux_{IMAGE_GLIBC}",
            "--only-binary", ":all:", "--no-config",
        ]
        if as_of:
            command += ["--exclude-newer", as_of]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, check=False,
                                  timeout=RESOLVE_TIMEOUT_SECONDS, cwd=folder)
        except subprocess.TimeoutExpired as exc:
            raise EnvironmentFailure("resolving its requirements timed out") from exc
    if proc.returncode != 0:
        raise EnvironmentFailure(f"its requirements cannot be resolved: {_why(proc.stderr)}")
    return tuple(sorted((line.strip() for line in proc.stdout.splitlines()
                         if line.strip() and not line.lstrip().startswith("#")), key=str.lower))


def _why(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    useful = [line for line in lines if "×" in line or "╰" in line or "because" in line] or lines
    return " ".join(useful[:3])[:300]


def _uv() -> str:
    try:
        from uv import find_uv_bin  # lazy: only submissions with declared environments need uv
    except ImportError as exc:  # pragma: no cover - uv is a dependency
        raise EnvironmentFailure("uv is not installed", hint="pip install uv (see pyproject.toml)") from exc
    return find_uv_bin()
