"""Labels on every container and volume the platform creates, and who owns them.

``org.sandloop.owner`` names the controller process (``host:pid``) so that a later
controller can tell leftovers of a process that died from the live work of a process that
still runs beside it.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

PREFIX = "org.sandloop."
MANAGED = f"{PREFIX}managed"
OWNER = f"{PREFIX}owner"
CREATED = f"{PREFIX}created"


def this_owner() -> str:
    """The owner label value of the current process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def managed_labels(owner: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Labels for a new container: managed flag, owner, creation time, plus ``extra``.

    ``extra`` keys are namespaced (``run_id`` becomes ``org.sandloop.run_id``).
    """
    labels = {MANAGED: "1", OWNER: owner, CREATED: str(int(time.time()))}
    labels.update({f"{PREFIX}{key}": str(value)[:128] for key, value in extra.items()})
    return labels
