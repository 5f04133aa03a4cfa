"""Prompt templates kept in files next to the agent that uses them, versioned with the code.

A template is a Markdown (or text) file with ``${name}`` placeholders. Rendering is strict:
a placeholder without a value, or a value nobody asked for, is an error, so a template
and its caller cannot drift apart silently. Only ``${name}`` is special, so code samples
with braces or dollar signs need no escaping.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ValueError):
    """A template and the values given to it do not match (a bug, not a user error)."""


@dataclass(frozen=True)
class PromptTemplate:
    """One template file's text and the placeholders it uses."""

    name: str
    text: str

    @property
    def fields(self) -> frozenset[str]:
        """The placeholder names the template uses."""
        return frozenset(_PLACEHOLDER.findall(self.text))

    def render(self, values: Mapping[str, str]) -> str:
        """The text with every placeholder replaced.

        Raises:
            TemplateError: a placeholder has no value, or a value has no placeholder.
        """
        missing = self.fields - set(values)
        unused = set(values) - self.fields
        if missing or unused:
            raise TemplateError(f"template {self.name}: missing {sorted(missing)}, unused {sorted(unused)}")
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text).strip() + "\n"


@dataclass(frozen=True)
class PromptFolder:
    """The templates of one folder, loaded by name (``generate`` → ``generate.md``)."""

    root: Path

    def template(self, name: str) -> PromptTemplate:
        """The template ``name`` (a ``.md`` or ``.txt`` file in the folder)."""
        return _load(self.root, name)

    def names(self) -> list[str]:
        """Every template in the folder."""
        return sorted(p.stem for p in self.root.iterdir() if p.suffix in (".md", ".txt"))


@cache
def _load(root: Path, name: str) -> PromptTemplate:
    for suffix in (".md", ".txt"):
        path = root / f"{name}{suffix}"
        if path.is_file():
            return PromptTemplate(name, path.read_text(encoding="utf-8"))
    raise TemplateError(f"no prompt template {name!r} in {root}")
