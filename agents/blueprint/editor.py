"""The blueprint editor's checks (issue 41; the :mod:`agents.ports.editor` port): a pasted or edited
blueprint.json validated against the blueprint's model (its JSON Schema is
``Blueprint.model_json_schema()``), each mistake said at the member it is about, and a scenario's
template as a starting point.

The blueprint is user input: it is decoded with the blueprint's bounded decoder, and the lines
returned are the validator's messages, bounded (the console escapes them like any text).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from agents.blueprint import scenarios
from agents.blueprint.loading import BLUEPRINT_BOUNDS
from agents.blueprint.model import Blueprint
from agents.bounded_json import BoundedJSONError, loads_bounded
from agents.ports.editor import EditorCheck
from agents.untrusted_text import one_line

MAX_ERRORS = 12


class BlueprintEditor:
    """The blueprint agent's :class:`~agents.ports.editor.DocumentEditor`."""

    def starts(self) -> list[str]:
        """The scenarios (custom first)."""
        return scenarios.known()

    def template(self, name: str) -> str:
        """A blueprint to start from: the scenario's sections, one tool per tool name they show (reading
        ``<tool>.json``: attach such a file, or change its name), the fields to fill left empty."""
        chosen = scenarios.templates().get(name)
        sections = chosen["sections"] if chosen else [{"title": "Overview", "tools": ["facts"], "guidance": ""}]
        tools = list(dict.fromkeys(tool for section in sections for tool in section["tools"]))
        document = {
            "name": "my-report", "scenario": name if chosen else scenarios.CUSTOM, "title": "", "subject": "",
            "goal": "", "instructions": list(chosen.get("instructions", [])) if chosen else [],
            "tools": [{"name": tool, "files": [f"{tool}.json"]} for tool in tools],
            "sections": [{"title": s["title"], "tools": list(s["tools"]), "guidance": s.get("guidance", "")}
                         for s in sections],
            "qa": {"min_words": 150, "required_keywords": [], "markdown": True},
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    def check(self, text: str) -> EditorCheck:
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
            return EditorCheck(document, errors=[(path_of(e["loc"]), one_line(e["msg"].removeprefix("Value error, "),
                                                                              200)) for e in exc.errors()[:MAX_ERRORS]])
        return EditorCheck(document, files=[*blueprint.data_files(), *blueprint.code_files()])

    def schema(self) -> dict[str, Any]:
        """The blueprint's JSON Schema."""
        return Blueprint.model_json_schema()


def path_of(loc: tuple[int | str, ...]) -> str:
    """A validation error's location as a JSON path: ``sections[0].title``; the whole: ``(the blueprint)``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "(the blueprint)"
