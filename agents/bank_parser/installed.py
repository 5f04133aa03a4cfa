"""What the python-parser image has installed, read from its one source: requirements.in.

The LLM prompts list exactly these libraries, so a model is told what it may import and a
library added to the image (or removed) changes the prompt with no second list to edit.
Each line of ``requirements.in`` may say its import names in a ``# import: a, b`` comment;
otherwise the import name is the distribution name with ``_`` for ``-`` and ``.``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.ports.images import pin_requirements

REQUIREMENTS_IN = Path(__file__).resolve().parents[2] / "sandbox_images" / "python-parser" / "requirements.in"
_IMPORT_MARK = "# import:"


@dataclass(frozen=True)
class InstalledLibrary:
    """One distribution in the image: its pinned requirement and its import names."""

    requirement: str
    imports: tuple[str, ...]


def installed_libraries(requirements_in: Path = REQUIREMENTS_IN) -> list[InstalledLibrary]:
    """The image's libraries with the versions its build pins (pip itself left out)."""
    imports = _import_names(requirements_in)
    pins = [pin for pin in pin_requirements(requirements_in) if not pin.lower().startswith("pip")]
    return [InstalledLibrary(pin, imports.get(_name(pin).lower(), (_default_import(_name(pin)),))) for pin in pins]


def libraries_line(requirements_in: Path = REQUIREMENTS_IN) -> str:
    """For a prompt: "`pandas` (pandas==3.1.1), `fitz`/`pymupdf` (PyMuPDF==1.28.2), ..."."""
    return ", ".join("/".join(f"`{name}`" for name in lib.imports) + f" ({lib.requirement})"
                     for lib in installed_libraries(requirements_in))


def _import_names(requirements_in: Path) -> dict[str, tuple[str, ...]]:
    names = {}
    for raw in requirements_in.read_text(encoding="utf-8").splitlines():
        requirement, _, comment = raw.partition("#")
        if requirement.strip() and ("#" + comment).strip().startswith(_IMPORT_MARK):
            modules = ("#" + comment).strip()[len(_IMPORT_MARK):]
            names[_name(requirement).lower()] = tuple(m.strip() for m in modules.split(",") if m.strip())
    return names


def _name(requirement: str) -> str:
    for separator in ("==", ">=", "<=", "~=", "!=", "<", ">", "["):
        requirement = requirement.split(separator, 1)[0]
    return requirement.strip()


def _default_import(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")
