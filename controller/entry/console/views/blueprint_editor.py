"""The blueprint editor's checks (issue 41): a pasted or edited blueprint.json validated against the
blueprint's model (its JSON Schema is ``Blueprint.model_json_schema()``, served at
``/blueprints/schema.json``), each mistake said at the member it is about, and a scenario's template
as a starting point.

The blueprint is user input: it is decoded with the blueprint's bounded decoder, and the lines
shown are the validator's messages, bounded and escaped by the page like any text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agents.blueprint import scenarios
from agents.blueprint.loading import BLUEPRINT_BOUNDS
from agents.blueprint.model import Blueprint
from agents.bounded_json import BoundedJSONError, loads_bounded
from agents.untrusted_text import one_line

MAX_ERRORS = 12


@dataclass
class EditorCheck:
    """What the editor found: the document when it is valid, else the mistakes, each at its member."""

    document: dict[str, Any] | None = None
    blueprint: Blueprint | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)
    """(where, what): ``where`` is the member's path (``sections[0].title``), or ``(the JSON)``."""


def check_blueprint(text: str) -> EditorCheck:
    """``text`` decoded and validated as a blueprint.json."""
    if not text.strip():
        return EditorCheck(errors=[("(the JSON)", "paste or write a blueprint: a JSON object")])
    try:
        document = loads_bounded(text.encode("utf-8"), BLUEPRINT_BOUNDS)
    except BoundedJSONError as exc:
        return EditorCheck(errors=[("(the JSON)", one_line(str(exc), 200))])
    if not isinstance(document, dict):
        return EditorCheck(errors=[("(the JSON)", "a blueprint is a JSON object ({...})")])
    try:
        blueprint = Blueprint.model_validate(document)
    except ValidationError as exc:
        return EditorCheck(document, errors=[(path_of(e["loc"]), one_line(e["msg"].removeprefix("Value error, "), 200))
                                             for e in exc.errors()[:MAX_ERRORS]])
    except ValueError as exc:  # a scenario's defaults refused before the model's own checks
        return EditorCheck(document, errors=[("scenario", one_line(str(exc), 200))])
    return EditorCheck(document, blueprint)


def path_of(loc: tuple[int | str, ...]) -> str:
    """A validation error's location as a JSON path: ``sections[0].title``; the whole: ``(the blueprint)``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "(the blueprint)"


def missing_files(blueprint: Blueprint, attached: list[str]) -> list[str]:
    """The files the blueprint's tools and validators name that were not attached."""
    return [name for name in [*blueprint.data_files(), *blueprint.code_files()] if name not in attached]


def template(scenario: str) -> str:
    """A blueprint to start from: the scenario's sections, one tool per tool name they show (reading
    ``<tool>.json``: attach such a file, or change its name), the fields to fill left empty."""
    chosen = scenarios.templates().get(scenario)
    sections = chosen["sections"] if chosen else [{"title": "Overview", "tools": ["facts"], "guidance": ""}]
    tools = list(dict.fromkeys(name for section in sections for name in section["tools"]))
    document = {
        "name": "my-report", "scenario": scenario if chosen else scenarios.CUSTOM, "title": "", "subject": "",
        "goal": "", "instructions": list(chosen.get("instructions", [])) if chosen else [],
        "tools": [{"name": name, "files": [f"{name}.json"]} for name in tools],
        "sections": [{"title": s["title"], "tools": list(s["tools"]), "guidance": s.get("guidance", "")}
                     for s in sections],
        "qa": {"min_words": 150, "required_keywords": [], "markdown": True},
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def schema() -> dict[str, Any]:
    """The blueprint's JSON Schema (what the editor validates against)."""
    return Blueprint.model_json_schema()
