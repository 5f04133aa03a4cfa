"""A run's folder, ``runs/<run_id>/``: file names come from constants, writes are atomic.

Layout::

    runs/<run_id>/
        analysis.md                 what analyze found
        attempts/<n>/parser.py      the code of attempt n
        attempts/<n>/sandbox.json   outcome, exit code, limits hit, timings, output sizes
        attempts/<n>/stdout.txt     capped output of the sandbox
        attempts/<n>/stderr.txt
        attempts/<n>/result.json    the raw (untrusted) result document, if any
        attempts/<n>/diff.txt       the comparison report, if compared
        summary.json                the run's outcome (schema_version 1)
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.ports.artefacts import SUMMARY_FILE, write_atomic

#: The runner's record of a run (what resume reads); the service's workers look for it too.
RUN_RECORD = "run.json"


def new_run_id(target: str) -> str:
    """A sortable, unique run id such as ``20261122-041500-icici-3fa2``."""
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{target}-{secrets.token_hex(2)}"


@dataclass(frozen=True)
class RunArtefacts:
    """Writes the files of one run under its folder: the :class:`~agents.ports.artefacts.ArtefactStore` agents get."""

    run_dir: Path
    #: What the platform adds to the agent's ``summary.json`` (where its sandboxes ran: backend, runtime).
    summary_fields: Mapping[str, Any] = field(default_factory=dict)

    def write(self, relative: str, data: bytes | str) -> Path:
        """Write a file below the run folder and return its path."""
        path = self.run_dir / relative
        write_atomic(path, data)
        return path

    def write_json(self, relative: str, document: dict[str, Any]) -> Path:
        """Write a JSON document below the run folder (``summary.json`` with :attr:`summary_fields`)."""
        if relative == SUMMARY_FILE:
            document = {**document, **self.summary_fields}
        return self.write(relative, json.dumps(document, indent=2, default=str) + "\n")

    def write_attempt(self, attempt: int, name: str, data: bytes | str) -> Path:
        """Write a file into an attempt's folder."""
        return self.write(f"attempts/{attempt}/{name}", data)
