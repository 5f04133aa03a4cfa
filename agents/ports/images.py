"""The images port: what a sandbox image has installed, pinned the way its build pins it.

The platform builds ``sandbox_images/<name>`` with these pins; an agent that writes code for
the image lists the same libraries in its prompts. One function, so both agree.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path


def pin_requirements(requirements_in: Path) -> tuple[str, ...]:
    """Pin each requirement to the version installed in the controller, when it is installed."""
    pinned = []
    for raw in requirements_in.read_text(encoding="utf-8").splitlines():
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        if any(op in name for op in "=<>~!"):
            pinned.append(name)
            continue
        try:
            pinned.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pinned.append(name)
    pip_version = metadata.version("pip") if _has("pip") else None
    pinned.append(f"pip=={pip_version}" if pip_version else "pip")
    return tuple(pinned)


def _has(distribution: str) -> bool:
    try:
        metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True
