"""Side-by-side diffs with marked differences, and frames printed so that equal values print equally.

Issue 43: two lines are marked character by character only when they are similar (difflib's
ratio ≥ ``SIMILAR``); lines that differ entirely are marked whole, not at the few characters they
share by chance. Frames are compared as columns, each differing cell marked.
"""

from __future__ import annotations

import json
from pathlib import Path

from controller.entry.console.views.frame_table import Cell, frame_table
from controller.entry.console.views.frames import FrameText, cell, expected_frame, produced_frame
from controller.entry.console.views.side_by_side import FIRST, SIMILAR, marked, side_by_side


class TestSideBySide:
    def test_equal_texts_have_no_difference(self):
        result = side_by_side(["a", "b"], ["a", "b"])
        assert result.same and [r.kind for r in result.rows] == ["same", "same"]

    def test_changes_removals_and_additions_are_paired_and_anchored(self):
        result = side_by_side(["a", "b", "c", "d"], ["a", "B", "d", "e"])
        kinds = [(r.kind, r.left_no, r.right_no) for r in result.rows]
        assert ("changed", 2, 2) in kinds and ("removed", 3, None) in kinds and ("added", None, 4) in kinds
        anchors = [r.anchor for r in result.rows if r.anchor]
        assert anchors == [f"d{n}" for n in range(1, min(FIRST, result.differing) + 1)]

    def test_the_differing_characters_are_marked_and_escaped(self):
        left, right = marked("x <1>", "x <2>")
        assert str(left) == "x &lt;<mark>1</mark>&gt;" and str(right) == "x &lt;<mark>2</mark>&gt;"

    def test_similar_lines_are_marked_where_they_differ(self):
        """An edited line (ratio ≥ SIMILAR) has only its edit marked."""
        left, right = marked("    balance = row[3]  # <b>", "    balance = row[4]  # <b>")
        assert str(left) == "    balance = row[<mark>3</mark>]  # &lt;b&gt;"
        assert str(right) == "    balance = row[<mark>4</mark>]  # &lt;b&gt;"

    def test_lines_that_differ_entirely_are_marked_whole(self):
        """Two unrelated lines: no scattered marks on the letters they happen to share, each line marked whole."""
        a, b = "def parse(path: str) -> pd.DataFrame:", "    return frame.dropna(how='all') <x>"
        left, right = marked(a, b)
        assert (str(left) == "<mark>def parse(path: str) -&gt; pd.DataFrame:</mark>"
                and str(right) == "<mark>    return frame.dropna(how=&#39;all&#39;) &lt;x&gt;</mark>")
        assert str(left).count("<mark>") == 1 and str(right).count("<mark>") == 1
        empty, added = marked("", "new line")
        assert str(empty) == "" and str(added) == "<mark>new line</mark>"
        assert 0 < SIMILAR < 1


class TestFrames:
    def test_cells_print_canonically(self):
        assert [cell(v) for v in ("1935.30", 1935.3, "5", 5, 5.0, float("nan"), "", None, "abc")] == \
            ["1935.3", "1935.3", "5", "5", "5", "", "", "", "abc"]

    def test_expected_and_produced_print_alike(self, tmp_path: Path):
        (tmp_path / "result.csv").write_text("Date,Amount,Balance\n01-08-2024,1935.30,\n")
        (tmp_path / "result.json").write_text(json.dumps({
            "schema": "sandloop.frame/1", "columns": ["Date", "Amount", "Balance"],
            "dtypes": ["str", "float64", "float64"], "data": [["01-08-2024", 1935.3, None]]}))
        expected, produced = expected_frame(tmp_path / "result.csv"), produced_frame(tmp_path / "result.json")
        assert expected.lines == produced.lines == ["Date | Amount | Balance", "01-08-2024 | 1935.3 | "]
        assert expected.rows == produced.rows == [["Date", "Amount", "Balance"], ["01-08-2024", "1935.3", ""]]

    def test_a_hostile_result_is_a_problem_not_an_error(self, tmp_path: Path):
        (tmp_path / "result.json").write_text("[" * 100 + "]" * 100)
        assert "cannot be read" in produced_frame(tmp_path / "result.json").problem
        (tmp_path / "result.json").write_text(json.dumps({"status": "error", "message": "<b>boom</b>"}))
        assert produced_frame(tmp_path / "result.json").problem == "no frame: <b>boom</b>"


class TestFrameTable:
    def test_rows_are_aligned_columns_with_the_differing_cells_marked(self):
        """A changed row keeps its columns; only the cell that differs is marked, on both sides."""
        left = FrameText([["Date", "Amount", "Balance"], ["01", "5", "10"], ["02", "7", "20"]])
        right = FrameText([["Date", "Amount", "Balance"], ["01", "5", "10"], ["02", "7", "27"]])
        table = frame_table(left, right)
        assert [c.text for c in table.left_columns] == ["Date", "Amount", "Balance"] and not table.same
        same, changed = table.rows
        assert same.kind == "same" and not any(c.differs for c in same.left + same.right)
        assert changed.kind == "changed" and changed.anchor == "d1" and table.differing == 1
        assert changed.left == (Cell("02"), Cell("7"), Cell("20", True))
        assert changed.right == (Cell("02"), Cell("7"), Cell("27", True))

    def test_a_row_on_one_side_only_and_a_short_row(self):
        """A removed row's cells all differ and the other side is empty cells; a short row is padded."""
        left = FrameText([["A", "B"], ["1", "2"], ["3", "4"], ["x", "y"]])
        right = FrameText([["A", "B"], ["1", "2"], ["3"]])
        rows = frame_table(left, right, anchor="f").rows
        by_kind = {r.kind: r for r in rows}
        assert by_kind["changed"].right == (Cell("3"), Cell("")) and by_kind["changed"].left[1] == Cell("4", True)
        assert (by_kind["removed"].left == (Cell("x", True), Cell("y", True))
                and by_kind["removed"].right == (Cell(""), Cell("")))
        assert [r.anchor for r in rows if r.anchor] == ["f1", "f2"]

    def test_differing_column_names_are_marked(self):
        table = frame_table(FrameText([["Date", "Debit"]]), FrameText([["Date", "Debit Amt"]]))
        assert table.left_columns == (Cell("Date"), Cell("Debit", True)) and not table.same
