"""``python -m controller memory RUN_ID | --subject NAME [--json]``: a graph memory as a person reads it.

Each node, each field with its current value and its history (oldest first: when, the value,
the one it replaced, where from, why), then the conflicts, open ones marked. Values and
reasons were typed by a user: each is shown as one bounded printable line.
"""

from __future__ import annotations

import argparse
import json

from agents.ports.memory import Conflict, FieldChange, FieldMemory, MemoryView
from agents.untrusted_text import one_line
from controller.platform.settings import Settings
from controller.runner.memory import run_memory, subject_memory


def command(args: argparse.Namespace, settings: Settings) -> int:
    """Print the memory of a run or a subject; exit 0 (2 for an unknown run or subject)."""
    view = subject_memory(settings, args.subject) if args.subject else run_memory(settings, args.run_id)
    if args.json:
        print(json.dumps(view.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(memory_lines(view)))
    return 0


def memory_lines(view: MemoryView) -> list[str]:
    """The memory, node by node, then its conflicts."""
    who = f"subject {one_line(view.subject, 80)}" if view.subject else "one conversation"
    lines = [f"graph memory of {who}: {len(view.nodes)} node(s), {len(view.runs)} conversation(s)"
             + (f" ({', '.join(view.runs[-3:])})" if view.runs else "")
             + (f" of {', '.join(one_line(t, 64) for t in view.targets[-5:])}" if view.targets else "")]
    for node in view.nodes:
        lines.append(f"{node.name}")
        for field in node.fields:
            lines += field_lines(field)
    open_count = len(view.open_conflicts())
    lines.append(f"conflicts: {len(view.conflicts)} ({open_count} open)")
    lines += [conflict_line(c) for c in view.conflicts]
    return lines


def field_lines(field: FieldMemory) -> list[str]:
    """A field's current value, then one line per entry of its history."""
    now = "skipped" if field.skipped else _value(field.value) if field.updated_at else "(no current value)"
    return [f"  {field.name} = {now}"] + [f"    {change_line(change)}" for change in field.history]


def change_line(change: FieldChange) -> str:
    """One history entry: when, what, instead of what, from where, why."""
    flags: list[str] = [change.temporal] if change.temporal != "present" else []
    flags += [] if change.applied else ["not applied"]
    flags += ["correction"] if change.correction else []
    was = f" (was {_value(change.previous)})" if change.previous is not None else ""
    return (f"{change.at[:19]}  {_value(change.value)}{was}  {change.source}"
            f"{' [' + ', '.join(flags) + ']' if flags else ''}  run {change.run_id} turn {change.turn}: "
            f"{one_line(change.reasoning, 160)}")


def conflict_line(conflict: Conflict) -> str:
    """One conflict, open or how it was resolved."""
    state = f"resolved: {one_line(conflict.resolution, 120)}" if conflict.resolved else "OPEN"
    return (f"  {conflict.node}.{conflict.field}: {_value(conflict.old)} vs {_value(conflict.new)} "
            f"(run {conflict.run_id} turn {conflict.turn}, {conflict.at[:19]}): {state}")


def _value(value: object) -> str:
    return "-" if value is None else one_line(json.dumps(value, ensure_ascii=False), 120)
