"""Installing a missing host program with Debian's apt-get, the one way the project does it.

``make run``/``make images`` install debootstrap this way (images/base.py) and ``make test``
installs the programs some tests drive on the host (tools/host_packages.py): only as root on a
machine that has apt-get; everywhere else the caller says what is missing in one line.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence


def can_install() -> bool:
    """Root on a machine with apt-get: packages can be installed without asking anyone."""
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def install_commands(packages: Sequence[str]) -> list[list[str]]:
    """The commands that install ``packages`` (quiet, no prompt), in order."""
    return [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]]
