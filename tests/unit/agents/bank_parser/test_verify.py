"""Self-consistency (issue 15): the statement's facts and the checks of a frame against them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pdfplumber
import pytest

from agents.bank_parser.statement_facts import amounts_in, read_facts
from agents.bank_parser.verify import verify
from tests.corpus.generate import generate

SEED = 7


def facts_of(pdf: Path):
    with pdfplumber.open(pdf) as document:
        return read_facts((p.page_number, p.extract_text() or "") for p in document.pages)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Banks with different amount styles: split, suffix Dr/Cr, signed with totals; two
    statement periods in one file (marlow), space-grouped decimal commas (oakhaven), Indian
    grouping (northcliff)."""
    out = tmp_path_factory.mktemp("verify-corpus")
    generate(out, SEED, ["aldermoor", "dunmore", "glenrock", "marlow", "northcliff", "oakhaven", "pemberton"])
    return out


class TestStatementFacts:
    """Reading what a statement prints about itself."""

    def test_amount_forms(self) -> None:
        """Separators, decimal commas and suffixes read as absolute cents; dates are no amounts."""
        assert amounts_in("05.08.24 Card €1.234,56 Dr €15.506,15") == (123456, 1550615)
        assert amounts_in("2024-08-05 Salary (1,200.00) 9,999.99") == (120000, 999999)
        assert amounts_in("Loan instalment 98 937.02 31,764.84")[-2:] == (93702, 3176484)
        assert amounts_in("01-08-2024 Salary 1935.3 1,23,456.00") == (193530, 12345600)

    def test_whole_amounts_when_no_amount_has_decimals(self) -> None:
        """A yen statement prints no decimals: its numbers are read as whole amounts (in cents),
        and a year-first date is a date, not three numbers."""
        text = "Opening Balance ¥583,300\n2024/11/03 Insurance premium City Power ¥3,600 ¥579,700\n"
        facts = read_facts([(1, text)])
        assert facts.opening == 58330000 and [line.amounts for line in facts.lines] == [(360000, 57970000)]
        assert read_facts([(1, text + "Fee 1.50\n")]).lines == ()  # one decimal amount: whole numbers are not amounts
        assert amounts_in("2024/11/03 Coffee 3.50") == (350,)

    def test_a_space_ocr_put_after_the_decimal_point(self) -> None:
        """'7,29,242. 60CR' (OCR's gap after the point) reads as the parser reads it; a number
        with three digits after such a gap is left alone."""
        assert amounts_in("18-11-23 Online shopping 26.40 7,29,242. 60CR") == (2640, 72924260)
        assert amounts_in("23/07/2023 Standing order 8,260. 70- 37,276.45") == (826070, 3727645)
        assert amounts_in("01/02/2024 Invoice 12. 345 items 1.00") == (100,)

    def test_balances_totals_and_lines(self) -> None:
        """Opening/closing balances, printed totals, and dated lines with amounts are read."""
        text = ("Statement period 01/08/2024 to 31/08/2024\nOpening balance 1,000.00\n"
                "02/08/2024 Coffee 3.50 996.50\n03/08/2024 Salary 500.00 1,496.50\n"
                "Total debits 3.50\nTotal credits 500.00\nClosing balance 1,496.50\n")
        facts = read_facts([(1, text)])
        assert (facts.opening, facts.closing) == (100000, 149650)
        assert (facts.total_debits, facts.total_credits) == (350, 50000)
        assert [line.amounts for line in facts.lines] == [(350, 99650), (50000, 149650)]

    def test_balances_read_with_their_spaced_groups(self) -> None:
        """'13 297,90' on a balance line is 13297.90, not 297.90."""
        facts = read_facts([(1, "Opening Balance 13 297,90\n02.04.2024 Refund 5 914,84CR 19 212,74\n"
                                "Closing Balance 19 212,74\nTotal credits 5 914,84\n")])
        assert (facts.opening, facts.closing, facts.total_credits) == (1329790, 1921274, 591484)

    def test_every_period_s_totals_are_kept(self) -> None:
        """Two statement periods in one file: both sets of totals, the last as the total."""
        period = "Total debits {}\nTotal credits {}\n"
        facts = read_facts([(1, period.format("3.50", "500.00")), (2, period.format("10.00", "20.00"))])
        assert (facts.debit_totals, facts.credit_totals) == ((350, 1000), (50000, 2000))
        assert (facts.total_debits, facts.total_credits) == (1000, 2000)


class TestVerify:
    """The checks on real corpus statements and their expected frames."""

    @pytest.mark.parametrize("bank", ["aldermoor", "dunmore", "glenrock", "marlow", "northcliff", "oakhaven",
                                      "pemberton"])
    def test_expected_frames_are_self_consistent(self, corpus: Path, bank: str) -> None:
        """The right answer passes: balances chain, every PDF line is a row, counts agree."""
        result = verify(pd.read_csv(corpus / bank / "result.csv"), facts_of(corpus / bank / "statement.pdf"))
        held = {c.name for c in result.checks if c.state == "held"}
        assert result.self_consistent, result.report()
        assert {"running balance", "row count", "coverage"} <= held

    def test_bare_totals_of_two_periods_add_up_column_by_column(self) -> None:
        """Two 'Total' lines (debits, credits in column order): 5+20 debits and 10+3 credits
        hold; the same figures summed after sorting each line (8, 30) would not be the rows'."""
        text = ("01/08/2024 Coffee 5.00 95.00\n02/08/2024 Salary 10.00 105.00\nTotal 5.00 10.00\n"
                "03/09/2024 Rent 20.00 85.00\n04/09/2024 Refund 3.00 88.00\nTotal 20.00 3.00\n")
        frame = pd.DataFrame({"Date": ["01/08/2024", "02/08/2024", "03/09/2024", "04/09/2024"],
                              "Debit": [5.0, None, 20.0, None], "Credit": [None, 10.0, None, 3.0],
                              "Balance": [95.0, 105.0, 85.0, 88.0]})
        totals = next(c for c in verify(frame, read_facts([(1, text)])).checks if c.name == "totals")
        assert totals.state == "held" and "(2 totals lines)" in totals.detail, totals
        wrong = frame.assign(Debit=[5.0, None, 21.0, None], Balance=[95.0, 105.0, 84.0, 87.0])
        assert next(c for c in verify(wrong, read_facts([(1, text)])).checks if c.name == "totals").state == "failed"

    def test_two_periods_add_up_to_both_sets_of_totals(self, corpus: Path) -> None:
        """marlow joins two periods: the rows' sums match the two totals lines together; the
        first period alone matches neither the last printed totals nor their sum."""
        facts = facts_of(corpus / "marlow" / "statement.pdf")
        frame = pd.read_csv(corpus / "marlow" / "result.csv")
        totals = next(c for c in verify(frame, facts).checks if c.name == "totals")
        assert totals.state == "held" and "(2 totals lines)" in totals.detail
        first = next(c for c in verify(frame.iloc[:45], facts).checks if c.name == "totals")
        assert first.state == "failed" and "over 2 totals lines" in first.detail

    def test_a_wrong_amount_breaks_the_chain(self, corpus: Path) -> None:
        """One misread digit in a debit fails the running balance and the coverage."""
        frame = pd.read_csv(corpus / "aldermoor" / "result.csv")
        row = frame.index[frame["Debit"].notna()][3]
        frame.loc[row, "Debit"] += 9.0
        result = verify(frame, facts_of(corpus / "aldermoor" / "statement.pdf"))
        failed = {c.name for c in result.checks if c.state == "failed"}
        assert not result.self_consistent and {"running balance", "coverage"} <= failed

    def test_a_missing_row_is_noticed(self, corpus: Path) -> None:
        """A dropped transaction fails the chain, the row count and the coverage."""
        frame = pd.read_csv(corpus / "dunmore" / "result.csv").drop(index=5).reset_index(drop=True)
        result = verify(frame, facts_of(corpus / "dunmore" / "statement.pdf"))
        failed = {c.name for c in result.checks if c.state == "failed"}
        assert {"running balance", "row count", "coverage"} <= failed

    def test_newest_first_is_still_consistent(self, corpus: Path) -> None:
        """Rows in reverse date order (as some banks print them) chain the other way."""
        frame = pd.read_csv(corpus / "glenrock" / "result.csv")[::-1].reset_index(drop=True)
        result = verify(frame, facts_of(corpus / "glenrock" / "statement.pdf"))
        assert result.self_consistent and "newest first" in result.roles

    def test_no_rows_fails(self, corpus: Path) -> None:
        """An empty frame is not self-consistent."""
        frame = pd.read_csv(corpus / "glenrock" / "result.csv").iloc[0:0]
        assert not verify(frame, facts_of(corpus / "glenrock" / "statement.pdf")).self_consistent

    def test_status_lists_checks_not_made(self, corpus: Path) -> None:
        """The summary names the checks that held and those that could not be made."""
        result = verify(pd.read_csv(corpus / "dunmore" / "result.csv"), facts_of(corpus / "dunmore" / "statement.pdf"))
        assert result.summary().startswith("self-consistent; held: ")
        assert "not made: opening balance" in result.summary()
