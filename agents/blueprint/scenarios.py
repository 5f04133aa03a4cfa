"""Scenario templates (seed 003's "default step generation per scenario"), shipped as files.

    agents/blueprint/scenarios/<scenario>.json   company_research, job_candidate, market_analysis

A blueprint that names a ``scenario`` and gives no ``sections`` gets the template's: each
template section lists the tool names it shows ("profile", "company", ...), of which it keeps
those the blueprint defines; a tool no section claims goes to the template's catch-all section
(``"rest": true``); a section left with no tool and that is not the first is dropped. A blueprint
without ``instructions`` gets the template's. ``custom`` (the default) has no template: its
blueprint must give its sections. A template is project data, validated like a blueprint's
sections when it is used; an unknown scenario is one line that lists the known ones.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "scenarios"
CUSTOM = "custom"


@lru_cache(maxsize=1)
def templates() -> dict[str, dict[str, Any]]:
    """Every shipped template, by scenario name."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(FOLDER.glob("*.json"))}


def known() -> list[str]:
    """The scenarios a blueprint may name."""
    return [CUSTOM, *templates()]


def with_defaults(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (a blueprint as given) with its scenario's default sections and instructions.

    Raises:
        ValueError: an unknown scenario, or a custom one without sections.
    """
    scenario = document.get("scenario", CUSTOM)
    if not isinstance(scenario, str):
        return document
    if scenario != CUSTOM and scenario not in templates():
        raise ValueError(f"unknown scenario {scenario[:40]!r} (scenarios: {', '.join(known())})")
    if document.get("sections"):
        return document
    if scenario == CUSTOM:
        raise ValueError(f"a custom blueprint needs sections; or name a scenario whose template gives them "
                         f"({', '.join(templates())})")
    template = templates()[scenario]
    tools = [t.get("name") for t in document.get("tools", []) if isinstance(t, dict)]
    out = {**document, "sections": default_sections(template, [t for t in tools if isinstance(t, str)])}
    if not document.get("instructions"):
        out["instructions"] = list(template.get("instructions", []))
    return out


def default_sections(template: dict[str, Any], tools: list[str]) -> list[dict[str, Any]]:
    """The template's sections for a blueprint with ``tools``: each keeps the tools it names that exist."""
    claimed: set[str] = set()
    sections = []
    for section in template["sections"]:
        mine = [name for name in section["tools"] if name in tools and name not in claimed]
        claimed.update(mine)
        sections.append({"title": section["title"], "tools": mine, "guidance": section.get("guidance", ""),
                         "rest": bool(section.get("rest"))})
    rest = [name for name in tools if name not in claimed]
    catch_all = next((s for s in sections if s["rest"]), sections[-1])
    catch_all["tools"] += rest
    kept = [s for i, s in enumerate(sections) if s["tools"] or i == 0]
    return [{key: s[key] for key in ("title", "tools", "guidance")} for s in kept]
