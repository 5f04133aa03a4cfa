"""The researcher role: call each of the blueprint's tools and keep what they found.

A tool without code is a fixture file taken as it is, read on the host as *data* (JSON with
the bounded decoder, CSV as rows, text as text). A tool with code runs in its own sandbox
(:mod:`agents.blueprint.sandboxed`). A tool that fails, hangs or floods is a finding with an
error, not the end of the run: the writer says what is missing and QA judges the report.
"""

from __future__ import annotations

import csv
import time
from typing import Any, TypedDict

from agents.blueprint.model import ToolSpec
from agents.blueprint.sandboxed import Call, call_spec, run_call
from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.ports.sandbox import Sandbox, SandboxLimits
from agents.untrusted_text import one_line

DATA_BOUNDS = JSONBounds(max_bytes=1 << 20, max_depth=12, max_values=50_000)
MAX_ROWS = 1000


class Finding(TypedDict):
    """What one tool found (plain data: it lives in the graph's state)."""

    tool: str
    ok: bool
    value: Any
    error: str
    seconds: float
    sandboxed: bool


def parse_data_file(name: str, raw: bytes) -> Any:
    """A fixture file as data: JSON (bounded), CSV rows (at most :data:`MAX_ROWS`), else text.

    Raises:
        ValueError: the file is not what its suffix says.
    """
    text = raw.decode("utf-8")
    if name.endswith(".json"):
        return loads_bounded(raw, DATA_BOUNDS)
    if name.endswith(".csv"):
        rows = list(csv.DictReader(text.splitlines()))
        if len(rows) > MAX_ROWS:
            raise ValueError(f"{len(rows)} rows, more than {MAX_ROWS}")
        return rows
    return text


def file_finding(tool: ToolSpec, data: dict[str, bytes]) -> Finding:
    """The finding of a tool without code: its one file, read as data on the host."""
    name = tool.files[0]
    try:
        return Finding(tool=tool.name, ok=True, value=parse_data_file(name, data[name]), error="",
                       seconds=0.0, sandboxed=False)
    except (ValueError, BoundedJSONError, csv.Error) as exc:  # UnicodeDecodeError is a ValueError
        return Finding(tool=tool.name, ok=False, value=None, error=f"{name}: {one_line(str(exc), 200)}",
                       seconds=0.0, sandboxed=False)


def code_finding(tool: ToolSpec, data: dict[str, bytes], sandbox: Sandbox, image: str, limits: SandboxLimits,
                 labels: dict[str, str]) -> Finding:
    """The finding of a tool with code: ``run(data)`` in a fresh sandbox."""
    assert tool.code is not None  # the caller chose this path because there is code
    started = time.monotonic()
    call = Call("tool", tool.name, tool.code, {name: data[name] for name in tool.files})
    result = run_call(sandbox, call_spec(image, call, limits, {**labels, "tool": tool.name}))
    return Finding(tool=tool.name, ok=result.ok, value=result.value, error=result.error,
                   seconds=round(result.seconds or time.monotonic() - started, 3), sandboxed=True)


def research(tools: list[ToolSpec], data: dict[str, bytes], sandbox: Sandbox, image: str,
             limits: SandboxLimits, labels: dict[str, str]) -> list[Finding]:
    """Every tool's finding, in the blueprint's order."""
    return [code_finding(tool, data, sandbox, image, limits, labels) if tool.code is not None
            else file_finding(tool, data) for tool in tools]
