"""The engine-side services one CLI invocation uses: a connected client, the sandbox
backend, and images built on demand (each at most once per process)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import docker

from controller.images.builder import ensure_image, image_spec
from controller.sandbox.docker import DockerSandbox
from controller.sandbox.engine import connect
from controller.sandbox.labels import this_owner
from controller.sandbox.reaper import reap_leftovers
from controller.settings import Settings

Say = Callable[[str], None]


@dataclass
class Services:
    """A Docker client, the sandbox backend on it, and the images it has made sure of."""

    settings: Settings
    client: docker.DockerClient
    sandbox: DockerSandbox
    say: Say
    _images: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, settings: Settings, say: Say) -> Services:
        """Connect to the engine and remove leftovers of controllers that died.

        Raises:
            EngineUnavailable: no engine answers.
        """
        client = connect()
        removed = reap_leftovers(client)
        if removed:
            say(f"removed {removed} container(s)/volume(s) left behind by earlier runs")
        sandbox = DockerSandbox(client, user=settings.sandbox_user, owner=this_owner())
        return cls(settings, client, sandbox, say)

    def image(self, name: str) -> str:
        """The tag of sandbox image ``name``, building it first if the engine lacks it."""
        if name not in self._images:
            spec = image_spec(name, self.settings)
            self._images[name] = ensure_image(self.client, spec, self.settings, self.say)
        return self._images[name]

    def close(self) -> None:
        """Release the engine connection."""
        self.client.close()
