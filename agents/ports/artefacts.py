"""The artefact store port: where an agent writes a run's files (``runs/<run_id>/``).

The controller hands every run one store (:class:`controller.platform.artefacts.RunArtefacts`);
an agent writes through it and never builds a run folder's path itself. File names that
the controller reads back (the summary, the analysis) are fixed here.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

SUMMARY_FILE = "summary.json"
ANALYSIS_FILE = "analysis.md"


class ArtefactStore(Protocol):
    """Writes the files of one run below its folder; every write is atomic."""

    @property
    def run_dir(self) -> Path:
        """The run's folder."""
        ...

    def write(self, relative: str, data: bytes | str) -> Path:
        """Write a file below the run folder and return its path."""
        ...

    def write_json(self, relative: str, document: dict[str, Any]) -> Path:
        """Write a JSON document below the run folder."""
        ...

    def write_attempt(self, attempt: int, name: str, data: bytes | str) -> Path:
        """Write a file into an attempt's folder."""
        ...


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``path`` so that readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
