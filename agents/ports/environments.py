"""The environments port: what a folder declares it needs, and what the platform gives back.

What a folder declares it needs: Python requirements (and, for targets, Debian packages).

The files come from untrusted submissions. Only plain PEP 508 requirements from a package
index are kept: options (``-r``, ``-e``, ``--index-url``, ``-f``), URLs and local paths are
dropped with a note, so resolving never builds or runs anything of the submission's on the
host and never talks to an index the submission chose.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from packaging.requirements import InvalidRequirement, Requirement

REQUIREMENTS_FILE = "requirements.txt"
#: Where an environment image carries the judge that compares a result under its own pandas.
JUDGE_DIR = "/opt/sandloop/judge"
#: The image folder environment images are built from (their tags name it).
ENV_IMAGE_NAME = "python-parser-env"
PYPROJECT_FILE = "pyproject.toml"
#: Bigger declaration files are not read (a requirements file is a few hundred bytes).
MAX_DECLARATION_BYTES = 256 * 1024
_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{1,62}$")


@dataclass(frozen=True)
class DeclaredEnv:
    """Requirements as declared (normalised lines), Debian packages, and what was dropped."""

    python: tuple[str, ...] = ()
    debian: tuple[str, ...] = ()
    source: str = ""
    dropped: tuple[str, ...] = field(default=(), compare=False)

    @property
    def empty(self) -> bool:
        """Nothing declared: the default parser image serves as it is."""
        return not self.python and not self.debian


def read_declared(folder: Path) -> DeclaredEnv:
    """The environment a submission folder declares: requirements.txt, else pyproject.toml."""
    requirements = folder / REQUIREMENTS_FILE
    if requirements.is_file() and not requirements.is_symlink():
        lines, dropped = parse_requirements(_read(requirements))
        return DeclaredEnv(tuple(lines), (), REQUIREMENTS_FILE, tuple(dropped))
    pyproject = folder / PYPROJECT_FILE
    if pyproject.is_file() and not pyproject.is_symlink():
        lines, dropped = parse_requirements("\n".join(pyproject_dependencies(_read(pyproject))))
        return DeclaredEnv(tuple(lines), (), PYPROJECT_FILE, tuple(dropped))
    return DeclaredEnv()


def declared_from_lists(python: list[str], debian: list[str], source: str) -> DeclaredEnv:
    """A declaration given as lists (a target's target.toml), validated like a file's.

    Raises:
        ValueError: a Debian package name is not a valid package name.
    """
    lines, dropped = parse_requirements("\n".join(python))
    for name in debian:
        if not _DEBIAN_NAME.match(name):
            raise ValueError(f"not a Debian package name: {name!r}")
    return DeclaredEnv(tuple(lines), tuple(sorted(set(debian))), source, tuple(dropped))


def parse_requirements(text: str) -> tuple[list[str], list[str]]:
    """Keep index requirements (normalised, sorted, unique); return them and the dropped lines."""
    kept: dict[str, None] = {}
    dropped: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            dropped.append(line[:120])
            continue
        if requirement.url:
            dropped.append(line[:120])
            continue
        kept[str(requirement)] = None
    return sorted(kept, key=str.lower), dropped


def pyproject_dependencies(text: str) -> list[str]:
    """``[project].dependencies``, or Poetry's dependency names (their versions are not PEP 440)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = document.get("project", {})
    if isinstance(project, dict) and isinstance(project.get("dependencies"), list):
        return [str(item) for item in project["dependencies"]]
    poetry = document.get("tool", {}).get("poetry", {}).get("dependencies", {})
    return [str(name) for name in poetry if isinstance(poetry, dict) and name != "python"]


def _read(path: Path) -> str:
    """Text of a declaration file; UTF-16 with a BOM too (PowerShell's `pip freeze > file`)."""
    with path.open("rb") as handle:
        data = handle.read(MAX_DECLARATION_BYTES)
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    return data.decode(encoding, errors="replace")


def parse_as_of(text: str) -> str:
    """Validate a ``--as-of`` value (YYYY-MM-DD or an ISO timestamp) and return it for uv.

    Raises:
        ValueError: not a date.
    """
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text).isoformat()
        moment = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"--as-of {text!r} is not a date such as 2025-08-31") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Environment:
    """What a submission runs in: an image tag, or why there is none; and what it cost."""

    tag: str | None
    status: str  # built | reused | failed
    seconds: float
    pins: tuple[str, ...] = ()
    error: str = ""

    @property
    def short_tag(self) -> str:
        """The tag's hash part, for tables ('-' when there is no image)."""
        return self.tag.rsplit(":", 1)[-1] if self.tag else "-"


class EnvironmentProvider(Protocol):
    """Turns a declaration into an environment image (the controller's provisioner implements it)."""

    def provide(self, declared: DeclaredEnv, as_of: str | None) -> Environment:
        """The environment for ``declared`` as of ``as_of``; failures are returned, not raised."""
        ...
