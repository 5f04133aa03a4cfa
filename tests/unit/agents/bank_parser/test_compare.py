"""The comparison: DataFrame.equals decides, the diff report explains."""

from __future__ import annotations

import math

import pandas as pd

from agents.bank_parser.compare import compare_frames

EXPECTED = pd.DataFrame({"Date": ["01-08-2024", "02-08-2024"], "Debit": [1.5, math.nan]})


class TestCompareFrames:
    def test_equal_frames_pass(self):
        """Identical frames pass, NaN equal to NaN as in DataFrame.equals."""
        assert compare_frames(EXPECTED.copy(), EXPECTED).passed

    def test_shape_and_missing_rows(self):
        """A missing row shows in the shape and as '(no row)' cells."""
        result = compare_frames(EXPECTED.iloc[:1].reset_index(drop=True), EXPECTED)
        assert not result.passed
        assert result.actual_shape == (1, 2) and result.expected_shape == (2, 2)
        assert "(no row)" in result.report()

    def test_dtype_difference_is_named(self):
        """Numbers kept as text fail on dtype, and the report says which column."""
        actual = EXPECTED.assign(Debit=["1.5", None])
        result = compare_frames(actual, EXPECTED)
        assert "Debit" in result.dtype_diffs
        assert "dtype of 'Debit'" in result.report()

    def test_first_mismatching_cells(self):
        """A wrong value is reported with row, column, expected and actual."""
        actual = EXPECTED.assign(Debit=[2.5, math.nan])
        result = compare_frames(actual, EXPECTED)
        assert result.mismatched_cells == 1
        cell = result.cells[0]
        assert (cell.row, cell.column) == (0, "Debit")
        assert "1.5" in cell.expected and "2.5" in cell.actual

    def test_columns_missing_extra_and_order(self):
        """Renamed and reordered columns are all reported."""
        actual = pd.DataFrame({"Debit": [1.5, math.nan], "When": ["01-08-2024", "02-08-2024"]})
        result = compare_frames(actual, EXPECTED)
        assert result.missing_columns == ["Date"] and result.extra_columns == ["When"]

    def test_index_difference(self):
        """A non-default index fails equals() and is named in the report."""
        actual = EXPECTED.set_axis([5, 6])
        result = compare_frames(actual, EXPECTED)
        assert not result.passed and result.index_differs
