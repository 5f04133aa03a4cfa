"""Issue 35: without a CSV, the table's header is the row of banking labels, not an account
block's row of labels that an "Opening balance: …" line happens to follow; two tables side by
side are found by their repeated header and read one after the other."""

from __future__ import annotations

from types import SimpleNamespace

from agents.bank_parser.coders._runtime import page_word_rows, panel_cut
from agents.bank_parser.coders._table import find_word_header, header_score

Word = dict[str, object]


def line(top: float, *labels: tuple[float, str]) -> list[Word]:
    """One printed line: each label's words from its x on, 4.5 points a character."""
    words: list[Word] = []
    for x, label in labels:
        for text in label.split():
            words.append({"text": text, "x0": x, "x1": x + 4.5 * len(text), "top": top, "bottom": top + 8})
            x += 4.5 * len(text) + 3
    return words


ACCOUNT_BLOCK = line(100, (40, "Customer ID: C-48213"), (320, "Currency: Local"))
OPENING = line(112, (40, "Opening balance: 12,685.11"))
HEADER = line(140, (40, "Date"), (100, "Transaction Details"), (330, "Debit"), (400, "Credit"), (480, "Balance"))
ROW = line(152, (40, "02/10/2024"), (100, "Interest credit"), (400, "26.71"), (480, "12,711.82"))


class TestWithoutCsv:
    """find_word_header with no expected CSV."""

    def test_the_banking_header_wins_over_an_account_block(self) -> None:
        """The account block comes first and is followed by data, yet the table's header is chosen."""
        found = find_word_header([ACCOUNT_BLOCK, OPENING, HEADER, ROW], None)
        assert found == (["Date", "Transaction Details", "Debit", "Credit", "Balance"], 1)

    def test_any_row_of_labels_still_counts(self) -> None:
        """Labels outside the banking vocabulary are still a header when nothing better is there."""
        assert find_word_header([ACCOUNT_BLOCK, OPENING], None) == (["Customer ID: C-48213", "Currency: Local"], 1)
        assert header_score(["Customer ID: C-48213", "Currency: Local"], None) == 0.5
        assert header_score(["Date", "Debit", "Credit", "Balance"], None) == 1.0


class TestTwoTablesSideBySide:
    """panel_cut and page_word_rows: two tables across a page are read one after the other."""

    PAIR = line(140, (40, "Date Details Amount Balance"), (420, "Date Details Amount Balance"))
    ROW = line(152, (40, "01/04/24 Rent 100.00 DR 900.00 CR"), (420, "26/04/24 Pay 50.00 CR 950.00 CR"))

    def test_a_repeated_header_gives_the_cut_between_the_tables(self) -> None:
        """The cut lies between the left header's last word and the right one's first."""
        cut = panel_cut(self.PAIR + self.ROW, 3.0)
        assert cut is not None and self.PAIR[3]["x1"] < cut < 420  # type: ignore[operator]

    def test_one_table_or_a_repeated_line_with_figures_is_not_cut(self) -> None:
        """A single header, and a line whose halves repeat figures, leave the page whole."""
        assert panel_cut(HEADER + ROW, 3.0) is None
        assert panel_cut(line(10, (40, "Total 5.00"), (420, "Total 5.00")), 3.0) is None

    def test_rows_come_down_the_left_table_then_the_right(self) -> None:
        """Each table's header finds its own columns; the left row comes before the right one."""
        config = SimpleNamespace(header_labels=["Date", "Details", "Amount", "Balance"], header_lines=1,
                                 line_tolerance=3.0, boundary_rule="valley")
        rows = [cells for cells, _ in page_word_rows(self.PAIR + self.ROW, {}, config)]
        assert [cells[0] for cells in rows if cells[0][:1].isdigit()] == ["01/04/24", "26/04/24"]
