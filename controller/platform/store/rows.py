"""Rows as the store reads them: the run row decoder and the listing cursor."""

from __future__ import annotations

import json
from typing import Any, cast

from agents.ports.errors import ConfigError
from controller.platform.store.models import RunRow, RunStatus


def parse_cursor(cursor: str) -> int:
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 18:  # "²".isdigit() is True
        raise ConfigError(f"{cursor[:40]!r} is not a cursor this service gave", hint="use the next_cursor of a listing")
    return int(cursor)


def row_to_run(row: tuple[Any, ...]) -> RunRow:
    """A run row from the columns :data:`controller.platform.store.sql.RUN_COLUMNS` names, in order."""
    (run_id, seq, owner, agent, target, options, status, worker, lease_until, cancel, takeovers, created,
     started, finished, exit_code, summary, error, kind, last_event, upload_bytes, upload_held) = row
    return RunRow(
        id=str(run_id), seq=int(seq), owner=str(owner), agent=str(agent), target=str(target),
        options=dict(json.loads(options)), status=cast(RunStatus, status), worker=worker,
        lease_until=lease_until, cancel_requested=bool(cancel), takeovers=int(takeovers), created_at=float(created),
        started_at=started, finished_at=finished, exit_code=exit_code,
        summary=None if summary is None else dict(json.loads(summary)), error=str(error or ""),
        kind="check" if kind == "check" else "run", last_event=int(last_event), upload_bytes=int(upload_bytes),
        upload_held=bool(upload_held),
    )
