"""Issue 35: without a CSV, the table's header is the row of banking labels, not an account
block's row of labels that an "Opening balance: …" line happens to follow."""

from __future__ import annotations

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
