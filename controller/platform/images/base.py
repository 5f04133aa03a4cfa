"""The base image: use it if present, pull it if a registry answers, else bootstrap it.

Where no registry is reachable, ``debian:bookworm-slim`` is made from Debian's own packages
with debootstrap (minbase variant, plus python3 so that image builds need no network) and
imported under the same name, so the same Dockerfiles serve users who can pull.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import docker
import docker.errors

from agents.ports.errors import ImageBuildError, first_line
from agents.ports.events import Say
from controller.platform import apt
from controller.platform.images.build_lock import building, lock_path
from controller.platform.settings import Settings

#: Packages added to the bootstrapped base so that sandbox images build without network.
BOOTSTRAP_INCLUDE = ("python3", "ca-certificates")
#: Trimmed from the bootstrapped root, as the official slim images do.
TRIM_PATHS = ("usr/share/doc", "usr/share/man", "usr/share/info", "var/cache/apt/archives",
              "var/lib/apt/lists")
BOOTSTRAP_LABEL = "org.sandloop.bootstrapped"


def ensure_base_image(client: docker.DockerClient, settings: Settings, say: Say) -> None:
    """Make sure ``settings.base_image`` exists in the engine, pulling or bootstrapping it."""
    if image_exists(client, settings.base_image):
        return
    with building(lock_path(settings.cache_dir, settings.base_image), say, settings.base_image):
        if image_exists(client, settings.base_image):  # made by another process meanwhile
            return
        say(f"base image {settings.base_image} is missing; trying to pull it")
        try:
            client.images.pull(settings.base_image)
            return
        except docker.errors.APIError as exc:
            say(f"pull failed ({first_line(exc, 160)}); bootstrapping it from Debian's packages")
        bootstrap_base_image(client, settings, say)


def bootstrap_base_image(client: docker.DockerClient, settings: Settings, say: Say) -> None:
    """Build the base image's root filesystem with debootstrap and import it into the engine."""
    repository, _, tag = settings.base_image.partition(":")
    suite = tag.split("-")[0] or "bookworm"
    debootstrap = _find_debootstrap(say)
    with tempfile.TemporaryDirectory(prefix="sandloop-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _run_debootstrap(debootstrap, suite, rootfs, settings.debian_mirror, say)
        _trim(rootfs)
        archive = Path(tmp) / "rootfs.tar"
        say("packing the root filesystem")
        with tarfile.open(archive, "w") as tar:
            tar.add(rootfs, arcname=".")
        say(f"importing it as {settings.base_image}")
        client.api.import_image(
            src=str(archive),
            repository=repository,
            tag=tag or "latest",
            changes=['CMD ["bash"]', f"LABEL {BOOTSTRAP_LABEL}=debootstrap"],
        )
    if not image_exists(client, settings.base_image):
        raise ImageBuildError(f"importing the bootstrapped {settings.base_image} failed")


def _find_debootstrap(say: Say) -> str:
    found = shutil.which("debootstrap") or shutil.which("debootstrap", path="/usr/sbin:/sbin")
    if found:
        return found
    if not apt.can_install():
        raise ImageBuildError(
            "debootstrap is needed to make the base image and is not installed",
            hint="install it (sudo apt-get install debootstrap) and run make images as root",
        )
    say("installing debootstrap with apt-get")
    for command in apt.install_commands(["debootstrap"]):
        _checked(command, "installing debootstrap")
    return shutil.which("debootstrap", path="/usr/sbin:/sbin:/usr/bin") or "debootstrap"


def _run_debootstrap(debootstrap: str, suite: str, rootfs: Path, mirror: str, say: Say) -> None:
    if os.geteuid() != 0:
        raise ImageBuildError(
            "debootstrap must run as root to make the base image",
            hint="run `sudo make images` once, or load debian:bookworm-slim into the engine",
        )
    say(f"debootstrap {suite} from {mirror} (about a minute)")
    _checked(
        [debootstrap, "--variant=minbase", f"--include={','.join(BOOTSTRAP_INCLUDE)}",
         suite, str(rootfs), mirror],
        "debootstrap",
    )


def _trim(rootfs: Path) -> None:
    for relative in TRIM_PATHS:
        target = rootfs / relative
        if target.is_dir():
            for child in target.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()


def _checked(command: list[str], what: str) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ImageBuildError(f"{what} failed (exit {proc.returncode}): {' | '.join(tail)}")


def image_exists(client: docker.DockerClient, reference: str) -> bool:
    """Whether the engine already has ``reference``."""
    try:
        client.images.get(reference)
        return True
    except docker.errors.ImageNotFound:
        return False
