"""The editor port: an agent whose target is one document a person may write in the browser (the
blueprint agent's blueprint.json, issue 41) says how to start one, how to check one, and which
files it needs; the console's editor page uses it without naming the agent's package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class EditorCheck:
    """A written document checked: its decoded form when valid, else its mistakes, each at its member."""

    document: dict[str, Any] | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)
    """(where, what): ``where`` is the member's path (``sections[0].title``), or ``(the JSON)``."""
    files: list[str] = field(default_factory=list)
    """The files a valid document's run reads (its data and code files), to be attached."""

    @property
    def valid(self) -> bool:
        """Whether the document validated."""
        return self.document is not None and not self.errors


class DocumentEditor(Protocol):
    """What the console's editor needs of an agent (see the module doc)."""

    def starts(self) -> list[str]:
        """The templates one may start from (their names)."""

    def template(self, name: str) -> str:
        """A document to start from: the named template's (an unknown name: the plainest)."""

    def check(self, text: str) -> EditorCheck:
        """``text`` decoded (bounded) and validated, each mistake at its member."""

    def schema(self) -> dict[str, Any]:
        """The document's JSON Schema."""
