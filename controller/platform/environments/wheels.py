"""Download a resolved set's wheels on the host, for the image's interpreter and platform.

Docker builds here cannot reach a package index, so every wheel an environment image
installs is downloaded by the host's pip into ``<cache>/environments/wheels/<key>/`` (once
per resolved set; pip's own HTTP cache makes sets that share packages cheap). The set is
already complete, so pip downloads exactly the pins, ``--no-deps``, wheels only.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from controller.platform.environments.resolution import EnvironmentFailure
from controller.platform.images.build_lock import building, lock_path
from controller.platform.images.wheelhouse import COMPLETE_MARKER, IMAGE_PYTHON, pip_download

REQUIREMENTS_TXT = "requirements.txt"
DOWNLOAD_TIMEOUT_SECONDS = 900


def wheels_for(pins: tuple[str, ...], arch: str, cache_dir: Path) -> Path:
    """Return a folder with one wheel per pin and a requirements.txt; download what is missing.

    Raises:
        EnvironmentFailure: a pinned package has no wheel for the image or cannot be fetched.
    """
    key = hashlib.sha256(f"{IMAGE_PYTHON}|{arch}|{'|'.join(pins)}".encode()).hexdigest()[:16]
    folder = cache_dir / "environments" / "wheels" / key
    if (folder / COMPLETE_MARKER).exists():
        return folder
    # locked: the rmtree of a half-made folder must never be another process's download in progress
    with building(lock_path(cache_dir, f"env-wheels-{key}"), lambda _line: None, "its wheels"):
        if not (folder / COMPLETE_MARKER).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            (folder / REQUIREMENTS_TXT).write_text("".join(f"{pin}\n" for pin in pins), encoding="utf-8")
            _download(folder, arch)
            (folder / COMPLETE_MARKER).touch()
    return folder


def _download(folder: Path, arch: str) -> None:
    command = pip_download(folder, arch, "--no-deps")
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=DOWNLOAD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentFailure("downloading its wheels timed out") from exc
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])[:300]
        raise EnvironmentFailure(f"its wheels cannot be downloaded: {tail}")
