"""Which form field a refusal belongs to, so the page shows the service's one line next to it.

The line itself is the service's (the API's ``detail``, the CLI's ``error:``); only its place is
chosen here: a validation error names its field; otherwise the line names the file or option
it is about (``statement.pdf``, ``result.csv``, ``target.toml``, a zip, the coder, the agent).
Anything else (a full queue, the quota) is said above the form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FORM = "_form"
#: Words in a refusal → the field they speak of, tried in order.
CLUES: tuple[tuple[str, str], ...] = (
    ("statement", "statement"), ("pdf", "statement"), ("result.csv", "result"), ("target.toml", "target_toml"),
    (".zip", "submission"), ("zip", "submission"), (".py", "parser"), ("parser", "parser"), ("coder", "coder"),
    ("interactive", "interactive"), ("replies", "interactive"), ("agent", "agent"), ("as_of", "as_of"),
    ("as of", "as_of"), ("jobs", "jobs"), ("attempt", "max_attempts"), ("target", "target"),
)


def field_of(line: str, fields: Sequence[str]) -> str:
    """The field of ``fields`` that ``line`` speaks of; :data:`FORM` when none."""
    lowered = line.lower()
    for clue, name in CLUES:
        if clue in lowered and name in fields:
            return name
    return FORM


def validation_field(errors: Sequence[Any], fields: Sequence[str]) -> str:
    """The field the first validation error names (pydantic's ``loc``)."""
    for part in (errors[0].get("loc", ()) if errors else ()):
        if part in fields:
            return str(part)
    return FORM
