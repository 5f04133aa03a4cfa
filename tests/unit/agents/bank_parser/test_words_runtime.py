"""Repair of OCR-confused words from the statement's own text (issue 46): the runtime's pure
functions, the parser that carries them, and the host that reads their claims.

What they must guarantee: a word changes only into a word (or pair of words) the same
statement holds more often, differing from it only by OCR's confusions (I/l/1, J/], O/0,
rn/m) or a space; a tie or a word found nowhere else leaves the text as read; the result
does not depend on chance, and the cost stays linear on long statements.
(The module's copy rules are tested with the balance repair's, in test_repair_runtime.)
"""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pandas as pd

from agents.bank_parser.coders import _words_runtime as wrt
from agents.bank_parser.repairs import Repair, confirms, read_repairs, repaired_rows
from agents.bank_parser.statement_facts import read_facts
from agents.bank_parser.verify import verify

LABELS = ["Date", "Description", "Debit", "Credit", "Balance"]


def config() -> SimpleNamespace:
    """A split Debit/Credit statement with a running balance (as test_repair_runtime's)."""
    return SimpleNamespace(
        thousands_separator=",", decimal_separator=".", currency_tokens=["$"], suffix_signs={},
        header_labels=LABELS, balance_index=4, amounts={"kind": "split", "debit": 2, "credit": 3},
        columns={"Date": [0, "date"], "Description": [1, "text"], "Debit": ["debit", "number"],
                 "Credit": ["credit", "number"], "Balance": [4, "number"]},
        dtypes={}, date_formats={"Date": ["%d-%m-%Y", "%d-%m-%Y"]}, required=["Date", "Balance"],
        reject_unparsable=True, need_amount=True, skip_pattern=r"\b(opening|closing)\s+balance\b",
        merge_continuations=True, max_continuation_gap=20.0,
    )


def rows(*descriptions: str) -> list[tuple[list[str], float]]:
    """Raw rows, one debit of 1.00 each, with these descriptions."""
    out = []
    for day, text in enumerate(descriptions, start=1):
        out.append(([f"{day % 28 + 1:02d}-08-2024", text, "1.00", "", f"{100_000 - day}.00"], 0.0))
    return out


def described(raw: list[tuple[list[str], float]]) -> list[str]:
    return [cells[1] for cells, _gap in raw]


class TestReadsAlike:
    """reads_alike: OCR's confusions only."""

    def test_confusions(self) -> None:
        """I/l/1, J/], O/0 and rn/m read alike; other letters do not."""
        assert wrt.reads_alike("lyer", "Iyer") and wrt.reads_alike("UP]", "UPI")
        assert wrt.reads_alike("From]", "FromJ") and wrt.reads_alike("Femandes", "Fernandes")
        assert wrt.reads_alike("C0RP", "CORP")
        assert not wrt.reads_alike("Iyer", "Ayer") and not wrt.reads_alike("Iyer", "Iyers")


class TestRepairWords:
    """repair_words: a confused word becomes the statement's own, more frequent one."""

    def test_substitutes_the_more_frequent_word(self) -> None:
        """'P lyer' and 'UP]' are read right on other lines: they are replaced and logged."""
        raw = rows("UPI Payment P Iyer", "UPI Payment P Iyer", "UP] Payment P lyer", "Rent")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed) == ["UPI Payment P Iyer"] * 3 + ["Rent"]
        assert made == [{"row": 2, "column": "Description", "before": "UP]", "after": "UPI", "rule": "word"},
                        {"row": 2, "column": "Description", "before": "lyer", "after": "Iyer", "rule": "word"}]

    def test_rn_for_m(self) -> None:
        """'Femandes' becomes 'Fernandes' when the statement has it more often."""
        fixed, _made = wrt.repair_words(rows("NEFT Fernandes", "NEFT Fernandes", "NEFT Femandes"), config())
        assert described(fixed) == ["NEFT Fernandes"] * 3

    def test_merges_a_word_split_by_ocr(self) -> None:
        """'QuickF uel $ tation' (as Tesseract read the corpus's scan) becomes 'QuickFuel Station'."""
        raw = rows("Card QuickFuel Station", "Card QuickFuel Station", "Card QuickF uel $ tation")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed) == ["Card QuickFuel Station"] * 3
        assert [(m["before"], m["after"]) for m in made] == [("QuickF uel", "QuickFuel"), ("$ tation", "Station")]

    def test_splits_a_word_joined_by_ocr(self) -> None:
        """'From]' (the J read as ] and its space lost) becomes 'From J'."""
        raw = rows("NEFT From J Fernandes", "NEFT From J Fernandes", "NEFT From] Fernandes")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed) == ["NEFT From J Fernandes"] * 3
        assert made[0]["before"] == "From]" and made[0]["after"] == "From J"

    def test_a_lone_mark_becomes_the_letter(self) -> None:
        """'NEFT ] Iqbal' (an initial read as ']') becomes 'NEFT J Iqbal'; a lone letter never changes."""
        raw = rows("NEFT J Iqbal", "NEFT J Iqbal", "NEFT ] Iqbal", "Flat l", "Flat I")
        fixed, _made = wrt.repair_words(raw, config())
        assert described(fixed)[:4] == ["NEFT J Iqbal"] * 3 + ["Flat l"]

    def test_i_read_as_one_and_rn_as_m_in_one_line(self) -> None:
        """The corpus's 'UP1 Payment J Iqba1' and 'Payrnent' are read right elsewhere."""
        raw = rows("UPI Payment J Iqbal", "UPI Payment J Iqbal", "UP1 Payrnent J Iqba1")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed) == ["UPI Payment J Iqbal"] * 3 and len(made) == 3

    def test_a_stray_mark_beside_a_word(self) -> None:
        """As Tesseract read the corpus's names case: 'UPI]' and 'S$ tation' (a speck beside
        the word) are 'UPI' and 'Station'; 'Iyer,' with its comma is left alone."""
        raw = rows("UPI Card Station Iyer", "UPI Card Station Iyer", "UPI] Card S$ tation Iyer,")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed)[2] == "UPI Card Station Iyer,"
        assert [(m["before"], m["after"]) for m in made] == [("UPI]", "UPI"), ("S$ tation", "Station")]
        assert confirms("word", "UPI]", "UPI") and confirms("word", "S$ tation", "Station")

    def test_never_invents_a_word(self) -> None:
        """A word the statement holds nowhere else in a right form is left as read."""
        raw = rows("P lyer", "P lyer", "UP] Payment")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed) == described(raw) and made == []

    def test_a_tie_leaves_the_word(self) -> None:
        """Two readings as frequent as each other: nothing tells which is right."""
        raw = rows("P Iyer", "P lyer", "Rent")
        assert wrt.repair_words(raw, config())[1] == []
        raw = rows("P Iyer", "P 1yer", "P lyer")  # 'lyer' and '1yer' each once, 'Iyer' once
        assert wrt.repair_words(raw, config())[1] == []

    def test_does_not_join_two_words_found_elsewhere(self) -> None:
        """'Quick Fuel' stays two words although 'QuickFuel' is more frequent: both words are real."""
        raw = rows("QuickFuel", "QuickFuel", "QuickFuel", "Quick Fuel", "Quick", "Fuel")
        fixed, _made = wrt.repair_words(raw, config())
        assert described(fixed)[3] == "Quick Fuel"

    def test_numbers_and_other_columns_untouched(self) -> None:
        """Figures and dates are not text: a reference of digits or an amount never changes."""
        raw = rows("Ref 10O", "Ref 100", "Ref 100")
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed)[0] == "Ref 10O" and made == []  # '10O' has a letter but '100' none
        assert [c[2:] for c, _g in fixed] == [c[2:] for c, _g in raw]

    def test_continuation_lines_are_repaired_under_their_row(self) -> None:
        """A wrapped description line is text of the row above it and counts as such."""
        raw = rows("Transfer to", "Transfer to", "Transfer to")
        raw.insert(1, (["", "P Iyer", "", "", ""], 2.0))
        raw.insert(3, (["", "P Iyer", "", "", ""], 2.0))
        raw.append((["", "P lyer", "", "", ""], 2.0))
        fixed, made = wrt.repair_words(raw, config())
        assert described(fixed)[-1] == "P Iyer" and made[0]["row"] == 2

    def test_deterministic_and_bounded_on_long_statements(self) -> None:
        """20,000 rows with many near-identical names: the same result twice, in seconds."""
        names = [f"Name{i % 500} Iyer{i % 7}" for i in range(20_000)] + ["Name3 lyer3"]
        raw = rows(*names)
        began = time.monotonic()
        first = wrt.repair_words(raw, config())
        elapsed = time.monotonic() - began
        assert first == wrt.repair_words(raw, config())
        assert described(first[0])[-1] == "Name3 Iyer3"
        assert elapsed < 10.0, elapsed


class TestOnTheHost:
    """The host confirms a word's repair, lists it on verify.txt, and keeps coverage by figures."""

    TEXT = "Opening balance 1,000.00\n01/08/2024 Coffee P lyer 3.50 996.50\n02/08/2024 Rent 100.00 896.50\n"

    def test_confirms_only_confusions(self) -> None:
        """A 'word' claim must read alike; a claim turning one name into another is ignored."""
        assert confirms("word", "lyer", "Iyer") and confirms("word", "From]", "From J")
        assert confirms("word", "QuickF uel", "QuickFuel")
        assert not confirms("word", "Iyer", "Rao") and not confirms("word", "Iyer", "Iyer")

    def test_listed_on_verify_txt(self) -> None:
        """The replacement is a line of the attempt's verify.txt and counted in the checks line;
        it does not count as a repaired figure for the coverage check."""
        stderr = b"sandloop-repair " + json.dumps(
            {"row": 0, "column": "Description", "before": "lyer", "after": "Iyer", "rule": "word"}).encode()
        repairs = read_repairs(stderr)
        assert repairs == (Repair(0, "Description", "lyer", "Iyer", "word"),)
        assert repaired_rows(repairs) == frozenset()
        frame = pd.DataFrame({"Date": ["2024-08-01", "2024-08-02"], "Description": ["Coffee P Iyer", "Rent"],
                              "Debit": [3.5, 100.0], "Credit": [None, None], "Balance": [996.5, 896.5]})
        result = verify(frame, read_facts([(1, self.TEXT)]), repairs)
        assert "[repair] row 0 Description: lyer -> Iyer (word)" in result.report()
        assert "repaired: 1 word(s)" in result.summary()
