"""Side-by-side diffs with marked differences, and frames printed so that equal values print equally."""

from __future__ import annotations

import json
from pathlib import Path

from controller.entry.console.views.frames import cell, expected_frame, produced_frame
from controller.entry.console.views.side_by_side import FIRST, marked, side_by_side


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

    def test_a_hostile_result_is_a_problem_not_an_error(self, tmp_path: Path):
        (tmp_path / "result.json").write_text("[" * 100 + "]" * 100)
        assert "cannot be read" in produced_frame(tmp_path / "result.json").problem
        (tmp_path / "result.json").write_text(json.dumps({"status": "error", "message": "<b>boom</b>"}))
        assert produced_frame(tmp_path / "result.json").problem == "no frame: <b>boom</b>"
