"""The frame codec on hostile result.json documents: every one is a ResultFormatError with a
one-line reason (or a clean ParserFailure), never another exception, and bounded before json
recurses. Regressions found by hand and by ``make fuzz`` live here; the property test at the
end runs the fuzzer's own inputs with a small budget."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from agents.bank_parser.frame_codec import (
    FRAME_BOUNDS,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    ParserFailure,
    ResultFormatError,
    decode_result,
)
from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded, structure_of
from tests.fuzz.decoders import FRAME_INPUTS, check_frame


def frame_doc(columns, dtypes, data, index=None) -> bytes:  # noqa: ANN001
    index = index or {"kind": "range", "start": 0, "stop": len(data), "step": 1}
    return json.dumps({"schema": "sandloop.frame/1", "status": "ok", "columns": columns, "dtypes": dtypes,
                       "index": index, "data": data}, allow_nan=True).encode()


def refused(raw: bytes) -> str:
    with pytest.raises(ResultFormatError) as raised:
        decode_result(raw)
    message = str(raised.value)
    assert "\n" not in message and len(message) < 400
    return message


class TestNesting:
    def test_the_issues_4_mb_nested_array(self):
        """Attack 1: 4 MB of nested arrays is refused by the pre-scan, not a RecursionError."""
        n = 2 * 1024 * 1024
        assert "nested" in refused(b"[" * n + b"]" * n)

    def test_deep_objects_and_unclosed_nesting(self):
        """Nested objects, and nesting that never closes, are refused the same way."""
        assert "nested" in refused(b'{"a":' * 50_000 + b"1" + b"}" * 50_000)
        assert "nested" in refused(b'{"schema":"sandloop.frame/1","data":' + b"[" * 100_000)

    def test_brackets_inside_strings_do_not_count(self):
        """A cell holding '[[[[[[' is text, not nesting: the frame decodes."""
        frame = decode_result(frame_doc(["a"], ["object"], [["[[[[[[[[{{{{"], ['\\"[[[[']]))
        assert isinstance(frame, pd.DataFrame) and frame.iloc[0, 0] == "[[[[[[[[{{{{"

    def test_one_level_more_than_the_format_needs_is_refused(self):
        """Depth 4 (document, data, row, cell object) decodes; a list inside a cell object does not."""
        assert isinstance(decode_result(frame_doc(["a"], ["object"], [[{"$repr": "x"}]])), pd.DataFrame)
        assert "nested" in refused(frame_doc(["a"], ["object"], [[{"$repr": ["x"]}]]))

    def test_structure_scan_counts(self):
        """The pre-scan measures depth and counts values outside strings only."""
        assert structure_of(b'[1,[2,3],{"a":"],,["}]') == (2, 7)  # 3 commas + 3 containers + 1: an upper bound
        assert structure_of(b"") == (0, 1)


class TestBounds:
    def test_millions_of_values_are_refused_before_parsing(self):
        """A 16 MB array of zeros (8 M values) is refused by count, not turned into Python objects."""
        assert "values" in refused(b"[" + b"0," * 8_000_000 + b"0]")

    def test_oversized_document(self):
        """More bytes than the bound is refused without reading them."""
        with pytest.raises(BoundedJSONError, match="bytes"):
            loads_bounded(b" " * 101, JSONBounds(max_bytes=100, max_depth=4, max_values=10))
        assert FRAME_BOUNDS.max_depth == 4

    def test_huge_integer_and_float_literals(self):
        """A 5000-digit integer (past Python's digit limit) is refused; 1e999 is infinity and must fit its dtype."""
        assert "JSON" in refused(b'{"schema":"sandloop.frame/1","status":"ok","columns":["a"],"dtypes":["int64"],'
                                 b'"data":[[' + b"9" * 5000 + b"]]}")
        assert "int64" in refused(frame_doc(["a"], ["int64"], [[float("inf")]]))
        assert "int64" in refused(frame_doc(["a"], ["int64"], [[2**70]]))

    def test_huge_string_cell(self):
        """A cell longer than MAX_CELL_CHARS is refused."""
        assert "characters" in refused(frame_doc(["a"], ["object"], [["x" * (MAX_CELL_CHARS + 1)]]))

    def test_too_many_columns(self):
        """More than MAX_COLUMNS columns is refused."""
        width = MAX_COLUMNS + 1
        assert "columns" in refused(frame_doc([str(i) for i in range(width)], ["int64"] * width, [[0] * width]))

    def test_a_claim_of_millions_of_rows(self):
        """An index claiming 10 M rows over two rows of data is refused; nothing is allocated for the claim."""
        doc = frame_doc(["a"], ["int64"], [[1], [2]], {"kind": "range", "start": 0, "stop": 10_000_000, "step": 1})
        assert "index" in refused(doc)


class TestMalformed:
    @pytest.mark.parametrize("raw", [
        b"\xff\xfe\x00{", b'{"schema":"sandloop.frame/1","schema":"x"}', b"NaN", b"[]", b'"\\', b"",
    ])
    def test_not_a_document(self, raw):
        """Invalid UTF-8, a repeated key, a bare constant, an unterminated string: refused in one line."""
        refused(raw)

    def test_nan_and_infinity_in_a_float_column_are_kept(self):
        """NaN and Infinity tokens are part of the format (json writes them) and decode as floats."""
        frame = decode_result(b'{"schema":"sandloop.frame/1","status":"ok","columns":["a"],"dtypes":["float64"],'
                              b'"data":[[NaN],[Infinity],[-Infinity]],"index":{"kind":"range","start":0,"stop":3,"step":1}}')
        assert frame["a"].isna().iloc[0] and frame["a"].iloc[1] == float("inf")

    @pytest.mark.parametrize("dtype", ["category", "complex128", "datetime64[ns, ../../etc/passwd]", "datetime64[xs]",
                                       ""])
    def test_dtype_off_the_allowlist(self, dtype):
        """A dtype name off the allowlist (or a time zone that is a path) is refused."""
        refused(frame_doc(["a"], [dtype], []))

    def test_lone_surrogate(self):
        """A '\\ud800' escape cannot be written to an artefact as UTF-8: refused."""
        assert "surrogate" in refused(b'{"schema":"sandloop.frame/1","status":"ok","columns":["\\ud800"],'
                                      b'"dtypes":["object"],"data":[],"index":{"kind":"range","start":0,"stop":0,"step":1}}')

    def test_bad_datetime_cells(self):
        """A $datetime that is not a date, or out of range, is refused rather than raised."""
        refused(frame_doc(["a"], ["datetime64[ns]"], [[{"$datetime": "not a date"}]]))
        refused(frame_doc(["a"], ["object"], [[{"$datetime": "99999-01-01"}]]))

    def test_reported_failure_is_made_printable(self):
        """Escape sequences and line breaks in a parser's message are neutralised; odd field types are named."""
        decoded = decode_result(json.dumps({"schema": "sandloop.frame/1", "status": "error", "kind": "type_error",
                                            "error_type": ["list"], "message": "\x1b[2J\x1b]0;x\x07fake\nPASSED",
                                            "traceback": "a\x1b[31mb"}).encode())
        assert isinstance(decoded, ParserFailure) and decoded.kind == "type_error"
        assert "\x1b" not in decoded.message and "\n" not in decoded.message and decoded.error_type == "list"
        assert "\x1b" not in decoded.traceback


class TestFuzzedInputs:
    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(FRAME_INPUTS)
    def test_any_input_keeps_the_contract(self, raw):
        """Whatever the bytes: a frame, a failure or a ResultFormatError, and the frame compares cleanly."""
        check_frame(raw)
