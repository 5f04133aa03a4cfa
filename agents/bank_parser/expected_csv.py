"""Caps on a target's ``result.csv`` before pandas reads it (issue 23).

``pd.read_csv`` of a user's file is bounded by what the file may be: its size, its number of
lines and the columns of its header, each checked here without pandas (a byte count, a
newline count, the csv module on the first line). A breach is one line naming the limit and
the setting that raises it (exit 2), before any container starts.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import BinaryIO

from agents.ports.config import AnalysisLimits
from agents.ports.errors import TargetError

_CHUNK = 1 << 20
HINT_CSV = "fix or remove result.csv"


def check_expected_csv(csv_path: Path, caps: AnalysisLimits) -> None:
    """Raise TargetError when ``csv_path`` is larger, longer or wider than ``caps`` allow."""
    try:
        size = csv_path.stat().st_size
        if size > caps.max_csv_mb * 1024 * 1024:
            raise TargetError(f"{csv_path.name}: {size / 1048576:.1f} MiB, larger than the {caps.max_csv_mb} MiB "
                              "allowed (raise SBX_ANALYSIS__MAX_CSV_MB to try anyway)", hint=HINT_CSV)
        with csv_path.open("rb") as handle:
            header = handle.readline(_CHUNK)
            lines = 1 + _newlines(handle)
    except OSError as exc:
        raise TargetError(f"cannot read {csv_path}: {exc.strerror}", hint=HINT_CSV) from exc
    if lines > caps.max_csv_rows + 1:
        raise TargetError(f"{csv_path.name}: {lines - 1} rows, more than the {caps.max_csv_rows} allowed (raise "
                          "SBX_ANALYSIS__MAX_CSV_ROWS to try anyway)", hint=HINT_CSV)
    columns = _header_columns(header)
    if columns > caps.max_csv_columns:
        raise TargetError(f"{csv_path.name}: {columns} columns, more than the {caps.max_csv_columns} allowed "
                          "(raise SBX_ANALYSIS__MAX_CSV_COLUMNS to try anyway)", hint=HINT_CSV)


def _newlines(handle: BinaryIO) -> int:
    count = 0
    while chunk := handle.read(_CHUNK):
        count += chunk.count(b"\n")
    return count


def _header_columns(header: bytes) -> int:
    """Columns of the header line (of its first MiB: a lower bound for a longer one)."""
    row = next(csv.reader([header.decode("utf-8", errors="replace").rstrip("\r\n")]), [])
    return len(row)
