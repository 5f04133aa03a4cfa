"""A service run's history record, handed to the service through the run's folder (issue 34).

A service on PostgreSQL keeps the run history in its store, but a run's child process never
gets the store's DSN (workers.py keeps the secret out of runs). The child's observer therefore
writes what the run ended with to ``<run>/history.handoff.json`` (:class:`HandoffHistory`), and
the service that ran it copies it into the store when the run ends
(:func:`controller.platform.shared_state.keep_handoff`). The file is JSON read with a size
limit and validated field by field: nothing in it is ever imported or called.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter

from agents.lessons import read_bounded
from controller.platform.observability.history import HistoryError, RunRecord

HANDOFF_FILE = "history.handoff.json"
RECORD = TypeAdapter(RunRecord)


@dataclass(frozen=True)
class HandoffHistory:
    """The run history as a service's run on PostgreSQL writes it: one record in its folder."""

    folder: Path

    @property
    def label(self) -> str:
        """Where the record goes, for a log line."""
        return str(self.folder / HANDOFF_FILE)

    def record(self, run: RunRecord) -> None:
        """Leave ``run`` for the service.

        Raises:
            HistoryError: the file cannot be written.
        """
        try:
            (self.folder / HANDOFF_FILE).write_bytes(RECORD.dump_json(run))
        except OSError as exc:
            raise HistoryError(f"cannot write the run history {self.label}: {exc}") from exc

    def last_success(self, agent: str, target: str) -> float | None:
        """Unknown here (the store has it): None."""
        return None


def read_handoff(folder: Path) -> RunRecord | None:
    """The record a run left in ``folder``; None if it left none.

    Raises:
        ValueError: the file is not a valid record (too large, not JSON, a field wrong).
        OSError: it cannot be read.
    """
    try:
        return RECORD.validate_json(read_bounded(folder / HANDOFF_FILE))
    except FileNotFoundError:
        return None
