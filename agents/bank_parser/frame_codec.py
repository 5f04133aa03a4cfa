"""Decode the python-parser sandbox's ``result.json`` into a DataFrame, safely.

The document is untrusted: it comes out of a sandbox that ran generated code. It is parsed
with ``json`` only, and only after a linear scan showed it within :data:`FRAME_BOUNDS`
(size, nesting, number of values: see :mod:`agents.bounded_json`); dtypes are accepted from
an allowlist; nothing in it is unpickled, imported, evaluated or executed. Whatever is
wrong with it is a :class:`ResultFormatError` with a one-line reason, never another
exception: the caller turns that into the attempt's ``type_error``.

The format needs four levels of nesting (document → ``data`` → row → a ``$datetime`` or
``$repr`` cell); a deeper document is refused before ``json`` sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.untrusted_text import one_line, printable

SCHEMA = "sandloop.frame/1"
_ALLOWED_DTYPES = {
    "str", "string", "object", "bool", "boolean",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
    "float32", "float64", "Float32", "Float64",
}
#: datetime64 with a unit and an optional time zone name (no paths: zone files are looked up).
_DATETIME_DTYPE = re.compile(r"^datetime64\[(s|ms|us|ns)(, (UTC|[A-Za-z]{1,14}(/[A-Za-z0-9_+\-]{1,30}){0,2}))?\]$")
#: Bounds of a result document; the sandbox's own cap on collected bytes is smaller.
FRAME_BOUNDS = JSONBounds(max_bytes=64 * 1024 * 1024, max_depth=4, max_values=2_000_000)
MAX_COLUMNS = 1024
#: Longest text cell or column name accepted: a bank statement's description is far shorter.
MAX_CELL_CHARS = 65_536


class ResultFormatError(ValueError):
    """The sandbox's result document is malformed or uses something not allowed."""


@dataclass(frozen=True)
class ParserFailure:
    """The parser raised (``execution_error``) or broke the contract (``type_error``)."""

    kind: str
    error_type: str
    message: str
    traceback: str


def decode_result(raw: bytes) -> pd.DataFrame | ParserFailure:
    """Return the DataFrame the parser produced, or the failure it reported.

    Raises:
        ResultFormatError: the document is not a valid ``sandloop.frame/1`` document (the
            only exception this function raises, whatever the bytes).
    """
    try:
        document = loads_bounded(raw, FRAME_BOUNDS)
    except BoundedJSONError as exc:
        raise ResultFormatError(f"result.json refused: {exc}") from exc
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ResultFormatError("result.json does not carry the sandloop.frame/1 schema")
    if document.get("status") == "error":
        return _failure(document)
    try:
        return _frame(document)
    except ResultFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - untrusted input: pandas may raise anything on it
        raise ResultFormatError(f"result.json cannot be turned into a DataFrame: "
                                f"{type(exc).__name__}: {one_line(str(exc), 200)}") from exc


def _failure(document: dict[str, Any]) -> ParserFailure:
    return ParserFailure(
        kind="type_error" if document.get("kind") == "type_error" else "execution_error",
        error_type=one_line(_text(document.get("error_type", "Exception")), 200),
        message=one_line(_text(document.get("message", "")), 2000),
        traceback=printable(_text(document.get("traceback", "")), 8000),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else type(value).__name__


def _frame(document: dict[str, Any]) -> pd.DataFrame:
    columns, dtypes, rows = document.get("columns"), document.get("dtypes"), document.get("data")
    if not (isinstance(columns, list) and isinstance(dtypes, list) and isinstance(rows, list)):
        raise ResultFormatError("result.json lacks columns, dtypes or data")
    if len(columns) > MAX_COLUMNS:
        raise ResultFormatError(f"result.json has {len(columns)} columns; at most {MAX_COLUMNS} are accepted")
    if len(columns) != len(dtypes) or any(not isinstance(r, list) or len(r) != len(columns) for r in rows):
        raise ResultFormatError("result.json rows do not match its columns")
    if not all(isinstance(d, str) for d in dtypes):
        raise ResultFormatError("result.json dtypes must be names (strings)")
    series = {
        position: _column([row[position] for row in rows], dtype)
        for position, dtype in enumerate(dtypes)
    }
    frame = pd.DataFrame(series, index=_index(document.get("index"), len(rows)))
    frame.columns = pd.Index([_cell(c) for c in columns])
    return frame


def _column(values: list[Any], dtype: str) -> pd.Series:
    cells = pd.Series([_cell(v) for v in values], dtype=object)
    if _DATETIME_DTYPE.match(dtype):
        return pd.to_datetime(cells).astype(dtype)
    if dtype not in _ALLOWED_DTYPES:
        raise ResultFormatError(f"column dtype {one_line(dtype, 60)!r} is not supported by the comparison")
    try:
        return cells if dtype == "object" else cells.astype(dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ResultFormatError(f"values do not fit dtype {dtype}: {one_line(str(exc), 200)}") from exc


def _cell(value: Any) -> Any:
    if isinstance(value, dict):
        if "$datetime" in value:
            return pd.Timestamp(_short(_text(value["$datetime"])))
        return _short(_text(value.get("$repr", "")))
    if isinstance(value, list):
        raise ResultFormatError("nested lists are not valid cell values")
    if isinstance(value, str):
        return _short(value)
    return value


def _short(text: str) -> str:
    if len(text) > MAX_CELL_CHARS:
        raise ResultFormatError(f"a cell holds {len(text)} characters; at most {MAX_CELL_CHARS} are accepted")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ResultFormatError("a cell holds a lone surrogate (not valid Unicode text)") from exc
    return text


def _index(spec: Any, length: int) -> pd.Index:
    if not isinstance(spec, dict) or spec.get("kind") == "range":
        spec = spec if isinstance(spec, dict) else {"start": 0, "stop": length, "step": 1}
        try:
            index = pd.RangeIndex(int(spec["start"]), int(spec["stop"]), int(spec["step"]))
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise ResultFormatError("result.json has a malformed range index") from exc
        if len(index) != length:
            raise ResultFormatError("result.json index length does not match its rows")
        return index
    values = spec.get("values")
    if not isinstance(values, list) or len(values) != length:
        raise ResultFormatError("result.json index length does not match its rows")
    return pd.Index(_column(values, _text(spec.get("dtype", "object"))))
