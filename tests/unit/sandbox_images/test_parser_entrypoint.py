"""The python-parser entrypoint and the host's decoder agree, and nothing unsafe decodes.

The entrypoint is loaded from its file (it is our own code, not generated code) to encode
frames here; the decoder is what the controller uses on sandbox output.
"""

from __future__ import annotations

import importlib.util
import json
import math

import pandas as pd
import pytest

from agents.bank_parser.frame_codec import ParserFailure, ResultFormatError, decode_result
from controller.platform.settings import PROJECT_ROOT

_spec = importlib.util.spec_from_file_location(
    "parser_entrypoint", PROJECT_ROOT / "sandbox_images" / "python-parser" / "entrypoint.py")
entrypoint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(entrypoint)


def roundtrip(frame: pd.DataFrame) -> pd.DataFrame:
    raw = json.dumps(entrypoint.encode_frame(frame), allow_nan=True).encode()
    decoded = decode_result(raw)
    assert isinstance(decoded, pd.DataFrame)
    return decoded


class TestRoundTrip:
    def test_csv_shaped_frame_survives_exactly(self):
        """A frame read from the ICICI CSV comes back equal, dtypes and NaNs included."""
        frame = pd.read_csv(PROJECT_ROOT / "data" / "icici" / "result.csv")
        assert roundtrip(frame).equals(frame)

    def test_mixed_dtypes(self):
        """ints, bools, floats with NaN, object columns with None and datetimes survive."""
        frame = pd.DataFrame({
            "i": [1, 2], "b": [True, False], "f": [0.1, math.nan],
            "o": pd.Series(["x", None], dtype=object),
            "t": pd.to_datetime(["2024-08-01", "2024-08-02"]),
        })
        back = roundtrip(frame)
        assert back.equals(frame)
        assert list(back.dtypes.astype(str)) == list(frame.dtypes.astype(str))

    def test_non_default_index_is_kept(self):
        """A filtered frame keeps its index, so equals() fails here exactly as in-process."""
        frame = pd.DataFrame({"a": [1, 2, 3]}).iloc[[0, 2]]
        back = roundtrip(frame)
        assert list(back.index) == [0, 2]
        assert not back.equals(frame.reset_index(drop=True))

    def test_not_a_dataframe_is_a_contract_error(self):
        """parse() returning a list breaks the contract."""
        with pytest.raises(entrypoint.ContractError):
            entrypoint.encode_frame([1, 2])


class TestDecoderRefuses:
    @pytest.mark.parametrize("raw", [
        b"not json", b"[]", b'{"schema": "other"}',
        b'{"schema": "sandloop.frame/1", "status": "ok", "columns": ["a"], "dtypes": ["float64"], "data": [[1, 2]]}',
        b'{"schema": "sandloop.frame/1", "status": "ok", "columns": ["a"], "dtypes": ["category"], "data": [[1]]}',
        b'{"schema": "sandloop.frame/1", "status": "ok", "columns": ["a"], "dtypes": ["object"], "data": [[[1]]]}',
    ])
    def test_malformed_documents(self, raw):
        """Anything but a well-formed document with allowed dtypes is a ResultFormatError."""
        with pytest.raises(ResultFormatError):
            decode_result(raw)

    def test_reported_failure(self):
        """An error document becomes a ParserFailure, never an exception in the controller."""
        raw = json.dumps({"schema": "sandloop.frame/1", "status": "error", "kind": "execution_error",
                          "error_type": "KeyError", "message": "'Date'", "traceback": "tb"}).encode()
        failure = decode_result(raw)
        assert isinstance(failure, ParserFailure) and failure.error_type == "KeyError"
