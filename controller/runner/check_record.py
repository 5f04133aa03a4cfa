"""A check's record for the service: ``runs/<id>/summary.json`` of a ``check --run-id ID``.

A plain ``check`` prints its table and keeps nothing; a check the service runs is a run row
like any other, so it leaves the summary.json a run leaves, with each artefact's verdict.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from agents.ports.artefacts import SUMMARY_FILE, write_atomic
from agents.ports.run import CheckVerdict

CHECK_SUMMARY_VERSION = 1


def check_summary(agent: str, target: str, code: int, verdicts: list[CheckVerdict]) -> dict[str, Any]:
    """The summary document: ``status`` passed (exit 0: nothing failed) or failed, counts and verdicts."""
    counts = {key: sum(v.status in kinds for v in verdicts) for key, kinds in
              (("passed", ("pass", "self-consistent")), ("failed", ("fail",)), ("unverified", ("unverified",)))}
    return {"schema_version": CHECK_SUMMARY_VERSION, "kind": "check", "agent": agent, "target": target,
            "status": "passed" if code == 0 else "failed", **counts,
            "verdicts": [dataclasses.asdict(v) for v in verdicts]}


def write_check_summary(run_dir: Path, agent: str, target: str, code: int, verdicts: list[CheckVerdict]) -> None:
    """Write the check's summary.json atomically (a reader sees all of it or none)."""
    write_atomic(run_dir / SUMMARY_FILE, json.dumps(check_summary(agent, target, code, verdicts), indent=2) + "\n")
