"""A table printed without a header (issue 24, part 2): columns from alignment, typed by values.

Scans are read by OCR in a sandbox; here the same coder runs on a text PDF's words (the
analysis marked as scanned, so OCR plans are made), which is what the coder sees of a scan
read exactly. Corpus banks are rendered without their header row; the best candidate must
cut the columns where the date-led lines leave gaps, name them by their values, and preview
the CSV's sample rows exactly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders._preview import FULL, Previewer
from agents.bank_parser.coders._table import alignment_cuts, typed_labels
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.output_schema import OutputSchema
from tests.corpus.expected import write_expected
from tests.corpus.ledger import make_statement
from tests.corpus.render import render_pdf
from tests.corpus.specs import bank
from tests.doubles.inprocess_statement import analyze_here

SEED = 7
HEADERLESS = ("aldermoor", "brightwater", "corvid", "dunmore", "eastgate", "fernhill", "glenrock", "harbourline",
              "ironbridge", "juniper", "larkspur", "marlow", "northcliff", "oakhaven", "pemberton")


def word(text: str, x0: float, top: float) -> dict[str, object]:
    return {"text": text, "x0": x0, "x1": x0 + 5.0 * len(text), "top": top, "bottom": top + 8.0}


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Analysis]:
    """Each bank rendered without a header, analysed, and marked scanned (OCR plans)."""
    out = tmp_path_factory.mktemp("headerless")
    found = {}
    for name in HEADERLESS:
        spec = dataclasses.replace(bank(name), rows=24, header=False, shaded_header=False)
        statement = make_statement(spec, SEED)
        folder = out / name
        folder.mkdir()
        render_pdf(folder / "statement.pdf", statement, spec)
        write_expected(folder / "result.csv", statement, spec)
        analysis = analyze_here(folder / "statement.pdf", folder / "result.csv")
        found[name] = dataclasses.replace(analysis, scanned=True)
    return found


class TestAlignment:
    """alignment_cuts and typed_labels on positioned words."""

    def test_cuts_fall_in_the_gaps_of_date_led_lines(self) -> None:
        """Three columns, ragged text in the middle one: two cuts, each between two columns."""
        lines = [[word("01/08/24", 10, top), word("Coffee" + " shop" * (top % 3), 80, top), word("3.50", 300, top)]
                 for top in range(0, 120, 12)]
        cuts = alignment_cuts(lines)
        assert len(cuts) == 2 and 50 < cuts[0] < 80 and 160 < cuts[1] < 300

    def test_spaces_between_words_are_no_columns(self) -> None:
        """A date in three words ("05 Aug 2024") stays one column."""
        lines = [[word("05", 10, t), word("Aug", 24, t), word("2024", 43, t), word("Rent", 120, t)]
                 for t in (0, 12, 24)]
        assert len(alignment_cuts(lines)) == 1

    def test_labels_by_values_and_the_balance_by_arithmetic(self) -> None:
        """The balance is the column another column's amounts explain, wherever it stands."""
        rows = [["01/08/24", "1,000.00", "Coffee", "3.50"], ["02/08/24", "996.50", "Tea", "(3.50)"],
                ["03/08/24", "1,496.50", "Salary", "500.00"], ["04/08/24", "1,396.50", "Rent", "(100.00)"]]
        assert typed_labels(rows) == ["Date", "Balance", "Description", "Amount 4"]


class TestHeaderlessCorpus:
    """Corpus layouts printed without a header row."""

    @pytest.mark.parametrize("name", HEADERLESS)
    def test_best_candidate_cuts_by_alignment_and_previews_the_samples(self, scanned: dict[str, Analysis],
                                                                          name: str) -> None:
        """An OCR plan with fixed cuts (no header to find) whose preview reproduces the CSV's samples."""
        best = OfflineCoder().candidates(scanned[name])[0]
        assert best.plan.strategy == "ocr_words" and best.plan.header_lines == 0
        assert len(best.plan.fixed_cuts) == len(best.plan.header_labels) - 1
        assert "Balance" in best.plan.header_labels and "Date" in best.plan.header_labels
        assert best.preview.verdict == FULL, Previewer(scanned[name]).score(best.plan)
        assert "fixed_cuts=" in best.code

    @pytest.mark.parametrize("name", ["brightwater", "corvid", "larkspur"])
    def test_without_a_csv_the_aligned_plan_is_self_consistent(self, scanned: dict[str, Analysis],
                                                                name: str) -> None:
        """Without a CSV a letterhead line may pass for a header; the plan by alignment is also
        made, and the self-consistency of the previews puts it first."""
        analysis = dataclasses.replace(scanned[name], expected=None, schema=OutputSchema())
        best = OfflineCoder().candidates(analysis)[0]
        assert best.plan.fixed_cuts and best.preview.verdict == FULL, best.plan.label

    def test_a_table_with_a_header_is_read_by_its_header(self, tmp_path: Path) -> None:
        """With its header printed, the same bank gets no alignment cuts."""
        spec = dataclasses.replace(bank("brightwater"), rows=24)
        statement = make_statement(spec, SEED)
        render_pdf(tmp_path / "statement.pdf", statement, spec)
        write_expected(tmp_path / "result.csv", statement, spec)
        analysis = dataclasses.replace(analyze_here(tmp_path / "statement.pdf", tmp_path / "result.csv"), scanned=True)
        best = OfflineCoder().candidates(analysis)[0]
        assert best.plan.fixed_cuts == () and best.plan.header_lines == 1
