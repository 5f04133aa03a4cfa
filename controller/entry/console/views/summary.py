"""A run's summary.json as facts people read: known fields first, in words; the rest as they are."""

from __future__ import annotations

from typing import Any

from agents.registry import AGENTS
from controller.entry.console.filters import duration
from controller.entry.console.views.paths import local_names

#: Fields shown elsewhere on the page, or of no use to a reader.
HIDDEN = frozenset({"schema_version", "run_id", "agent", "target", "status", "run_dir"})
LABELS = {"attempts": "attempts", "max_attempts": "attempts allowed", "wall_seconds": "wall time",
          "sandbox_seconds": "in sandboxes", "last_problem": "last problem", "failures": "failures",
          "coder": "coder", "checks": "checks", "verified": "verified", "parser_path": "parser"}
MAX_VALUE = 2000


def _value(key: str, value: Any) -> str:
    if key.endswith("_seconds") and isinstance(value, (int, float)):
        return duration(float(value))
    if isinstance(value, list):
        return ", ".join(str(v) for v in value[:50]) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in list(value.items())[:20]) or "—"
    return str(value)[:MAX_VALUE]


def summary_facts(summary: dict[str, Any] | None, agent: str = "", run_id: str = "") -> list[tuple[str, str]]:
    """(label, value) pairs of ``summary``: the known fields in their order, then the others; the
    published artefact named as ``agent`` names it (a blueprint run's is a ``report``, not a parser);
    paths named as in run ``run_id``'s folder, no server path."""
    if not summary:
        return []
    known = AGENTS.get(agent)
    labels = {**LABELS, "parser_path": known.info.artefact if known is not None else "artefact"}
    keys = [k for k in labels if k in summary] + sorted(k for k in summary if k not in labels and k not in HIDDEN)
    return [(labels.get(k, k.replace("_", " ")), local_names(_value(k, summary[k]), run_id))
            for k in keys if summary[k] not in ("", None)]
