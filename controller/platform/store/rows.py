"""Rows as both stores read them: columns, the run row decoder, listing filters and cursor, tokens."""

from __future__ import annotations

import hmac
import json
from typing import Any, cast

from agents.ports.errors import ConfigError
from controller.platform.store.models import RunRow, RunStatus, TokenRow

COLUMNS = ("id, seq, owner, agent, target, options, status, worker, lease_until, cancel_requested, "
           "takeovers, created_at, started_at, finished_at, exit_code, summary, error")


#: SQL of the statuses that count against an owner's quota (models.OPEN).
OPEN_SQL = "('queued', 'running', 'waiting')"
#: SQL of the statuses a run ends with (models.TERMINAL): what the execution history lists.
ENDED_SQL = "('passed', 'failed', 'error', 'cancelled')"
#: A waiting run is cancelled at once; its reason says so.
CANCEL_REASON_SQL = ("CASE status WHEN 'waiting' THEN 'cancelled while it waited for a reply' "
                     "ELSE 'cancelled before it started' END")


def history_filters(owner: str | None, agent: str | None, target: str | None, cursor: str | None,
                    mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters, ``mark`` their placeholder) of the execution history:
    ended runs, of ``owner`` (None: everyone's), ``agent`` and ``target`` if given, before ``cursor``."""
    where, params = [f"status IN {ENDED_SQL}"], []  # type: list[str], list[Any]
    for column, value in (("owner", owner), ("agent", agent), ("target", target)):
        if value is not None:
            where.append(f"{column} = {mark}")
            params.append(value)
    if cursor is not None:
        where.append(f"seq < {mark}")
        params.append(parse_cursor(cursor))
    return " AND ".join(where), params


#: The columns a listing's text search looks in (``list_filters``' ``text``).
SEARCHED = ("id", "target", "agent", "owner", "error")


def list_filters(owner: str | None, target: str | None, status: str | None, agent: str | None, text: str | None,
                 cursor: str | None, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters, ``mark`` their placeholder) of a run listing: each filter that
    is given, ``text`` as a case-insensitive substring of any of :data:`SEARCHED`, before ``cursor``."""
    where, params = ["1 = 1"], []  # type: list[str], list[Any]
    for column, value in (("owner", owner), ("target", target), ("status", status), ("agent", agent)):
        if value is not None:
            where.append(f"{column} = {mark}")
            params.append(value)
    if text:
        pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(" + " OR ".join(f"LOWER({column}) LIKE {mark} ESCAPE '\\'" for column in SEARCHED) + ")")
        params.extend([pattern] * len(SEARCHED))
    if cursor is not None:
        where.append(f"seq < {mark}")
        params.append(parse_cursor(cursor))
    return " AND ".join(where), params


def parse_cursor(cursor: str) -> int:
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 18:  # "²".isdigit() is True
        raise ConfigError(f"{cursor[:40]!r} is not a cursor this service gave", hint="use the next_cursor of a listing")
    return int(cursor)


def row_to_run(row: tuple[Any, ...]) -> RunRow:
    (run_id, seq, owner, agent, target, options, status, worker, lease_until, cancel, takeovers, created,
     started, finished, exit_code, summary, error) = row
    return RunRow(
        id=str(run_id), seq=int(seq), owner=str(owner), agent=str(agent), target=str(target),
        options=dict(json.loads(options)), status=cast(RunStatus, status), worker=worker,
        lease_until=lease_until, cancel_requested=bool(cancel), takeovers=int(takeovers), created_at=float(created),
        started_at=started, finished_at=finished, exit_code=exit_code,
        summary=None if summary is None else dict(json.loads(summary)), error=str(error or ""),
    )


def session_query(mark: str) -> str:
    """The SELECT of a live console session's token (``mark`` the placeholder: hash, then now)."""
    return ("SELECT t.name, t.admin, t.created_at, s.hash FROM sessions s JOIN tokens t ON t.name = s.token "
            f"WHERE s.hash = {mark} AND s.expires_at > {mark}")


def token_of(row: tuple[Any, ...] | None, digest: str) -> TokenRow | None:
    """The token of a (name, admin, created_at, hash) row found by ``digest``; the index found the row,
    the constant-time comparison is what decides."""
    if row is None or not hmac.compare_digest(str(row[3]), digest):
        return None
    return TokenRow(str(row[0]), bool(row[1]), float(row[2]))
