"""The manager's go/no-go (seed 003: the manager "makes go/no-go decisions").

The run stops with status ``no-go`` (exit 1, one line saying why) instead of writing a report
from nothing, when:

- before research, the required inputs are missing: the blueprint has no research tool at all,
  or a file a ``required`` tool reads is empty (no bytes, a CSV without a row, JSON that is
  null, ``{}`` or ``[]``);
- after research, every research tool failed, or a ``required`` tool did.

Otherwise it goes: a tool that failed but was not required leaves its section to be filled
("the tool ... failed"), as before.
"""

from __future__ import annotations

from agents.blueprint.model import Blueprint
from agents.blueprint.research import Finding, parse_data_file
from agents.bounded_json import BoundedJSONError
from agents.untrusted_text import one_line


def missing_inputs(blueprint: Blueprint, data: dict[str, bytes]) -> str:
    """Why the run cannot start ('' when it can): no tool, or a required tool's input is empty."""
    if not blueprint.tools:
        return "the blueprint has no research tool, so there is nothing to write the report from"
    for tool in blueprint.tools:
        empty = [name for name in tool.files if tool.required and _empty(name, data.get(name, b""))]
        if empty:
            return f"the required tool {tool.name} has nothing to read: {', '.join(empty)} is empty"
    return ""


def failed_research(blueprint: Blueprint, findings: list[Finding]) -> str:
    """Why the report cannot be written ('' when it can): every tool failed, or a required one did."""
    failed = [f for f in findings if not f["ok"]]
    if findings and len(failed) == len(findings):
        reasons = "; ".join(f"{f['tool']}: {one_line(f['error'], 80)}" for f in failed[:3])
        return f"every research tool failed ({reasons})"
    required = {tool.name for tool in blueprint.tools if tool.required}
    down = next((f for f in failed if f["tool"] in required), None)
    return f"the required tool {down['tool']} failed: {one_line(down['error'], 160)}" if down else ""


def _empty(name: str, raw: bytes) -> bool:
    """No bytes, or a file that reads as no data at all."""
    if not raw.strip():
        return True
    try:
        value = parse_data_file(name, raw)
    except (ValueError, BoundedJSONError):
        return False  # unreadable is the tool's failure to report, not an empty input
    return value is None or value == {} or value == [] or value == ""
