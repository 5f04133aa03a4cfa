"""Decode the python-parser sandbox's ``result.json`` into a DataFrame, safely.

The document is untrusted: it comes out of a sandbox that ran generated code. It is parsed
with ``json`` only, its size was capped by the sandbox, and dtypes are accepted from an
allowlist; nothing in it is unpickled, imported, evaluated or executed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

SCHEMA = "sandloop.frame/1"
_ALLOWED_DTYPES = {
    "str", "string", "object", "bool", "boolean",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
    "float32", "float64", "Float32", "Float64",
}
_DATETIME_PREFIX = "datetime64["


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
        ResultFormatError: the document is not a valid ``sandloop.frame/1`` document.
    """
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultFormatError(f"result.json is not valid JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ResultFormatError("result.json does not carry the sandloop.frame/1 schema")
    if document.get("status") == "error":
        return ParserFailure(
            kind="type_error" if document.get("kind") == "type_error" else "execution_error",
            error_type=str(document.get("error_type", "Exception"))[:200],
            message=str(document.get("message", ""))[:2000],
            traceback=str(document.get("traceback", ""))[-8000:],
        )
    return _frame(document)


def _frame(document: dict[str, Any]) -> pd.DataFrame:
    columns, dtypes, rows = document.get("columns"), document.get("dtypes"), document.get("data")
    if not (isinstance(columns, list) and isinstance(dtypes, list) and isinstance(rows, list)):
        raise ResultFormatError("result.json lacks columns, dtypes or data")
    if len(columns) != len(dtypes) or any(not isinstance(r, list) or len(r) != len(columns) for r in rows):
        raise ResultFormatError("result.json rows do not match its columns")
    series = {
        position: _column([row[position] for row in rows], str(dtype))
        for position, dtype in enumerate(dtypes)
    }
    frame = pd.DataFrame(series, index=_index(document.get("index"), len(rows)))
    frame.columns = pd.Index([_cell(c) for c in columns])
    return frame


def _column(values: list[Any], dtype: str) -> pd.Series:
    cells = pd.Series([_cell(v) for v in values], dtype=object)
    if dtype.startswith(_DATETIME_PREFIX) and dtype.endswith("]"):
        return pd.to_datetime(cells).astype(dtype)
    if dtype not in _ALLOWED_DTYPES:
        raise ResultFormatError(f"column dtype {dtype!r} is not supported by the comparison")
    try:
        return cells if dtype == "object" else cells.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise ResultFormatError(f"values do not fit dtype {dtype}: {exc}") from exc


def _cell(value: Any) -> Any:
    if isinstance(value, dict):
        if "$datetime" in value:
            return pd.Timestamp(str(value["$datetime"]))
        return str(value.get("$repr", ""))
    if isinstance(value, list):
        raise ResultFormatError("nested lists are not valid cell values")
    return value


def _index(spec: Any, length: int) -> pd.Index:
    if not isinstance(spec, dict) or spec.get("kind") == "range":
        spec = spec if isinstance(spec, dict) else {"start": 0, "stop": length, "step": 1}
        try:
            index = pd.RangeIndex(int(spec["start"]), int(spec["stop"]), int(spec["step"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultFormatError("result.json has a malformed range index") from exc
        if len(index) != length:
            raise ResultFormatError("result.json index length does not match its rows")
        return index
    values = spec.get("values")
    if not isinstance(values, list) or len(values) != length:
        raise ResultFormatError("result.json index length does not match its rows")
    return pd.Index(_column(values, str(spec.get("dtype", "object"))))
