"""Whether the engine holds the sandbox images the agents run in: the service's readiness check.

A service that lacks an image is up but not ready: its first run would spend minutes building
the image (or fail), so a load balancer should send its work elsewhere until
``python -m controller images`` has run. Which images count: every one this checkout can
build. The idris2 image counts only when its source archive is at hand
(``sandbox_images/idris2/idris2-0.8.0.tar.gz``): without it ``images`` cannot make it here, and a
service that would never become ready for want of one agent's image would serve no agent at
all; Idris runs then end with the one line of
:class:`~agents.ports.errors.ImageSourceMissing`, as on the command line.
"""

from __future__ import annotations

from collections.abc import Iterable

import docker
import docker.errors
import requests.exceptions

from agents.ports.errors import EngineUnavailable, EnvironmentFault
from controller.platform.images.base import image_exists
from controller.platform.images.builder import image_spec
from controller.platform.images.idris import IMAGE_NAME as IDRIS_IMAGE
from controller.platform.images.idris import SOURCE_ARCHIVE, idris_image_spec
from controller.platform.settings import Settings

#: The command that builds every missing sandbox image (``make images`` runs it).
BUILD_COMMAND = "python -m controller images"


class ImagesMissing(EnvironmentFault):
    """Sandbox images the agents need are not in the engine."""


def image_tag(name: str, settings: Settings) -> str:
    """The content tag of sandbox image ``name`` (idris2's leaves its source archive out)."""
    return idris_image_spec(settings).tag if name == IDRIS_IMAGE else image_spec(name, settings).tag


def counted(name: str, settings: Settings) -> bool:
    """Whether image ``name`` counts for readiness: this checkout can build it."""
    return name != IDRIS_IMAGE or (settings.images_dir / IDRIS_IMAGE / SOURCE_ARCHIVE).is_file()


def required_tags(names: Iterable[str], settings: Settings) -> list[str]:
    """The tags of ``names`` (without repeats, in order) that readiness waits for."""
    return [image_tag(name, settings) for name in dict.fromkeys(names) if counted(name, settings)]


def check_present(client: docker.DockerClient, tags: Iterable[str]) -> None:
    """Return if the engine has every image in ``tags``.

    Raises:
        ImagesMissing: some are not there (named, with the command that builds them).
        EngineUnavailable: the engine stopped answering while asked.
    """
    try:
        missing = [tag for tag in tags if not image_exists(client, tag)]
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailable(f"the Docker engine did not answer about its images ({type(exc).__name__})",
                                hint="see the engine check") from exc
    if missing:
        noun = "image is" if len(missing) == 1 else "images are"
        raise ImagesMissing(f"sandbox {noun} not in the engine: {', '.join(missing)}",
                            hint=f"build {'it' if len(missing) == 1 else 'them'} with: {BUILD_COMMAND}")
