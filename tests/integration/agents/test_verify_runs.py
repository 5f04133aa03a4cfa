"""Issues 15, 24 and 46 through the real CLI and sandbox: a statement without result.csv, a scan,
a scan whose cells lost their decimal point (repaired by the running balance), a scan of a
table without a header, a scan of names OCR confused with a row too faint to see, a PDF to
refuse.

Kept small for CI on two cores: one CSV-less bank, three short scanned statements (OCR runs in
the sandbox), one password-protected PDF. ``make eval`` runs the fuller set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.corpus.cases import SKEW, WITHHELD, _bank, write_hostile, write_nocsv, write_scanned
from tests.integration.agents.test_corpus import cli, finish, summaries

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")
SEED = 7


def passed_scan(tmp_path: Path, bank: str, rows: int, **case: Any) -> tuple[Path, dict[str, object], str]:
    """Run the scan ``write_scanned`` makes of ``bank`` through the CLI; it must pass, both
    compared and self-consistent. Returns its folder, its summary and the CLI's output."""
    folder = write_scanned(tmp_path / "data", bank, rows, SEED, **case)
    code, out, err = finish(cli(tmp_path, tmp_path / "data", "run", "--target", folder.name))
    assert code == 0, out + err[-3000:]
    (summary,) = summaries(tmp_path)
    assert summary["status"] == "passed" and summary["verified"] == "both", summary
    return folder, summary, out


class TestWithoutCsv:
    """A bank whose CSV is withheld."""

    def test_passes_as_self_consistent(self, tmp_path: Path) -> None:
        """Exit 0, status self-consistent with its checks listed; the parser's balances are right."""
        folder = write_nocsv(tmp_path / "data", _bank("dunmore"), SEED)
        code, out, err = finish(cli(tmp_path, tmp_path / "data", "run", "--target", folder.name))
        assert code == 0, out + err[-3000:]
        (summary,) = summaries(tmp_path)
        assert summary["status"] == "self-consistent" and summary["verified"] == "self-consistent"
        assert "held: " in str(summary["checks"]) and "running balance" in str(summary["checks"])
        assert "SELF-CONSISTENT" in out
        result = Path(str(summary["run_dir"])) / "attempts" / str(summary["attempts"]) / "verify.txt"
        assert "[held] coverage" in result.read_text()
        assert (tmp_path / "custom_parsers" / f"{folder.name}_parser.py").exists()
        withheld = pd.read_csv(folder / WITHHELD)
        assert "Balance" in withheld.columns


class TestScanned:
    """A short scanned statement (page images only) with its result.csv."""

    def test_ocr_parser_passes_and_is_self_consistent(self, tmp_path: Path) -> None:
        """The OCR parser's frame equals result.csv, and the run reports both verifications."""
        folder, _summary, _out = passed_scan(tmp_path, "dunmore", 8)
        parser = (tmp_path / "custom_parsers" / f"{folder.name}_parser.py").read_text()
        assert "pytesseract" in parser and "ocr_collect" in parser


class TestRepaired:
    """A scan in which a Balance and an Amount cell are printed without their decimal point."""

    def passed_with_two_repairs(self, tmp_path: Path, **case: bool) -> tuple[dict[str, object], list[str], str]:
        """Run the dunmore scan ``case`` makes; it must pass (both) with two repairs listed."""
        _folder, summary, out = passed_scan(tmp_path, "dunmore", 18, **case)
        repairs = summary["repairs"]
        assert isinstance(repairs, list) and len(repairs) == 2, summary
        return summary, [str(r) for r in repairs], out

    def test_the_parser_repairs_both_cells_and_lists_them(self, tmp_path: Path) -> None:
        """The frame equals result.csv (the true values), and the summary, the closing block and
        verify.txt name each repaired cell with its reading before and after."""
        summary, repairs, out = self.passed_with_two_repairs(tmp_path, faded=True)
        assert any("Balance" in r for r in repairs) and all("(decimal point)" in r for r in repairs)
        assert "repaired: 2 cell(s)" in str(summary["checks"]) and "repaired " in out
        attempt = Path(str(summary["run_dir"])) / "attempts" / str(summary["attempts"])
        assert (attempt / "verify.txt").read_text().count("[repair] row ") == 2
        assert b"sandloop-repair " in (attempt / "stderr.txt").read_bytes()

    def test_two_misreads_side_by_side_are_repaired_as_a_pair(self, tmp_path: Path) -> None:
        """A Balance cell and the next row's amount both lost their point: no single reading
        mends the chain, the one pair that does is made and both cells are listed."""
        _summary, repairs, _out = self.passed_with_two_repairs(tmp_path, neighbours=True)
        rows = sorted(int(r.split()[1]) for r in repairs)
        assert rows[1] == rows[0] + 1 and all("(decimal point)" in r or "(re-read)" in r for r in repairs)


class TestHeaderless:
    """A scan of a borderless table printed without its header row."""

    def test_columns_found_by_alignment_pass(self, tmp_path: Path) -> None:
        """The parser cuts the columns where the dated lines leave gaps; its frame equals result.csv."""
        folder, _summary, out = passed_scan(tmp_path, "brightwater", 24, headerless=True)
        assert "by-alignment" in out and "deskewed by" in out
        assert "fixed_cuts=" in (tmp_path / "custom_parsers" / f"{folder.name}_parser.py").read_text()


class TestSkewed:
    """Issue 24's report: 66 lines of a borderless table, every page turned by 0.7 degrees."""

    def test_deskewed_and_every_line_found(self, tmp_path: Path) -> None:
        """The analysis states the angle it turned each page by; all 66 rows come back, equal to
        result.csv, and the scan's OCR cost per page is in summary.json."""
        _folder, summary, out = passed_scan(tmp_path, "brightwater", 66, angle=SKEW)
        assert "deskewed by -0.7°" in out and "returned 66 rows" in out
        ocr = summary["ocr"]
        assert isinstance(ocr, dict) and ocr["pages"] == 2 and ocr["seconds_per_page"] > 0, ocr
        assert "  ocr           2 page(s)" in out


class TestNames:
    """Issue 46: names OCR confused on one line, and a row printed too faint for OCR to see."""

    def test_words_repaired_and_the_faint_row_found(self, tmp_path: Path) -> None:
        """The frame equals result.csv: the confused words take the statement's own form, the
        row OCR did not see is read from its band of the page, and verify.txt lists each."""
        _folder, summary, _out = passed_scan(tmp_path, "brightwater", 24, names="fainter")
        repairs = [str(r) for r in summary["repairs"]]  # type: ignore[attr-defined]
        assert any("(band read again)" in r and "(row found)" in r for r in repairs), repairs
        assert any("From] -> From J (word)" in r for r in repairs), repairs
        attempt = Path(str(summary["run_dir"])) / "attempts" / str(summary["attempts"])
        verify_txt = (attempt / "verify.txt").read_text()
        assert "row(s) found" in verify_txt and "word(s)" in verify_txt


class TestRefused:
    """A PDF no parser can be written for."""

    def test_password_protected_is_one_line_and_exit_2(self, tmp_path: Path) -> None:
        """One 'error:' line naming the password, exit 2, no traceback, no parser."""
        write_hostile(tmp_path / "data", "locked")
        code, out, err = finish(cli(tmp_path, tmp_path / "data", "run", "--target", "locked"))
        assert code == 2, out + err[-3000:]
        errors = [line for line in (out + err).splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "password-protected" in errors[0]
        assert "Traceback" not in out + err
        assert not (tmp_path / "custom_parsers").exists() or not any((tmp_path / "custom_parsers").iterdir())
