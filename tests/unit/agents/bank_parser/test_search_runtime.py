"""A running-balance break becomes a search for the row OCR lost (issue 46): pure functions.

What they must guarantee: a line the parser did not take as a row is taken only when one of
its readings is a transaction that closes the break to the cent on both sides, and when no
other line of the gap does; a row that does not close the balance is never taken.
"""

from __future__ import annotations

from types import SimpleNamespace

from agents.bank_parser.coders import _search_runtime as srt
from agents.bank_parser.repairs import BAND_MARK
from tests.unit.agents.bank_parser.test_repair_runtime import config, opening_row, statement

AMOUNTS = [-1250, 250_000, -50_000, -215, 10_000, -1_000, -20_000, 3_333]


def lost(rows: list[tuple[list[str], float]], row: int, date: str) -> list[tuple[list[str], float]]:
    """The rows with one transaction's date read badly, so the parser does not take it."""
    out = [(list(cells), gap) for cells, gap in rows]
    out[row][0][0] = date
    return out


class TestFindLostRows:
    """find_lost_rows: the balance names the missing amount; a line not taken must close it."""

    def test_a_date_with_a_stray_mark_is_found(self) -> None:
        """'04-08-2024.' is no date; with the mark taken off, the line closes the break exactly."""
        raw = lost(statement(AMOUNTS), 3, "04-08-2024.")
        fixed, found = srt.find_lost_rows(raw, config())
        assert fixed[3][0][0] == "04-08-2024"
        assert found == [{"row": 3, "column": "(row)", "before": f"04-08-2024. item 4 2.15 {raw[3][0][4]}",
                          "after": f"04-08-2024 | item 4 | 2.15 |  | {raw[3][0][4]}", "rule": "row found"}]

    def test_a_date_misread_is_the_one_between_its_neighbours(self) -> None:
        """'44-08-2024' (a faint row's 0 read 4) is no date; one character away, only
        04-08-2024 falls between the rows around it (03 and 05 August)."""
        raw = lost(statement(AMOUNTS), 3, "44-08-2024")
        fixed, found = srt.find_lost_rows(raw, config())
        assert fixed[3][0][0] == "04-08-2024" and len(found) == 1

    def test_a_date_with_two_fits_is_not_guessed(self) -> None:
        """Rows around the gap four weeks apart: several dates fit, so none is taken."""
        raw = lost(statement(AMOUNTS), 3, "44-08-2024")
        raw[2][0][0] = "01-08-2024"
        raw[4][0][0] = "29-08-2024"  # 04, 14 and 24 August all fit
        assert srt.date_between("44-08-2024", srt.gap_bounds((raw[2][0], raw[4][0]), config()), "%d-%m-%Y") is None
        assert srt.find_lost_rows(raw, config())[1] == []

    def test_a_garbled_amount_is_read_by_the_balance(self) -> None:
        """A lost row whose date and amount both read badly ('2,5O0.00') is found when one
        reading closes the balance."""
        raw = lost(statement(AMOUNTS), 1, "02-08-2024'")
        raw[1][0][3] = "2,5O0.00"
        fixed, found = srt.find_lost_rows(raw, config())
        assert fixed[1][0][3] == "2,500.00" and len(found) == 1

    def test_the_re_read_is_tried_first(self) -> None:
        """In a scan's parser the cell is read again alone; the new reading closes the break."""
        raw = lost(statement(AMOUNTS), 4, "05-08-2024:")
        raw[4][0][3] = "Tf ##"
        fixed, found = srt.find_lost_rows(raw, config(), reread=lambda i, p: "100.00" if (i, p) == (4, 3) else None)
        assert fixed[4][0][3] == "100.00" and found[0]["row"] == 4

    def test_a_row_that_does_not_close_the_balance_is_never_taken(self) -> None:
        """A line between the rows whose amount is not the missing one stays out."""
        raw = lost(statement(AMOUNTS), 3, "04-08-2024.")
        raw[3][0][2] = "2.16"  # one cent off: it would leave the balance broken
        fixed, found = srt.find_lost_rows(raw, config())
        assert found == [] and fixed == raw

    def test_two_lines_that_both_close_leave_the_gap(self) -> None:
        """Two candidates for one gap: nothing tells which was lost."""
        raw = lost(statement(AMOUNTS), 3, "04-08-2024.")
        twin = (["04-08-2024,", "other", *raw[3][0][2:]], 0.0)
        raw.insert(3, twin)
        fixed, found = srt.find_lost_rows(raw, config())
        assert found == [] and fixed == raw

    def test_a_line_after_the_last_row_is_not_taken(self) -> None:
        """Without a closing balance after it, nothing can confirm a last line."""
        raw = lost(statement(AMOUNTS), len(AMOUNTS) - 1, "08-08-2024.")
        assert srt.find_lost_rows(raw, config())[1] == []

    def test_a_gap_before_an_anchor_is_searched(self) -> None:
        """A printed opening balance is the other side of a lost first row."""
        raw = [opening_row(), *lost(statement(AMOUNTS), 0, "01-08-2024.")]
        fixed, found = srt.find_lost_rows(raw, config())
        assert fixed[1][0][0] == "01-08-2024" and found[0]["row"] == 0

    def test_without_a_balance_nothing_is_searched(self) -> None:
        """No running balance, no search."""
        raw = lost(statement(AMOUNTS), 3, "04-08-2024.")
        assert srt.find_lost_rows(raw, config(balance_index=None))[1] == []

    def test_bounded_on_long_statements(self) -> None:
        """2,000 rows with 20 lost: every one found, in one pass (seconds, not minutes)."""
        import random
        import time

        rng = random.Random(7)
        raw = statement([rng.choice((-1, 1)) * rng.randrange(100, 100_000) for _ in range(2000)], opening=10**9)
        for i, (cells, _gap) in enumerate(raw):
            cells[0] = f"{i % 28 + 1:02d}-08-2024"
        for i in range(10, 2000, 100):
            raw[i][0][0] += "."
        began = time.monotonic()
        _fixed, found = srt.find_lost_rows(raw, config())
        assert len(found) == 20 and time.monotonic() - began < 30.0

    def test_renumber_moves_later_repairs_down(self) -> None:
        """A repair counted before a row was found is counted after it on the new frame."""
        repairs = [{"row": 1}, {"row": 3}, {"row": 6}]
        assert [r["row"] for r in srt.renumber(repairs, [{"row": 3}, {"row": 5}])] == [1, 4, 8]


def test_config_has_dates() -> None:
    """The test statement's date column is the one searched for stray marks."""
    assert srt.date_positions(SimpleNamespace(**vars(config()))) == [0]


class TestOnTheHost:
    """A found row is confirmed, listed on verify.txt and counted apart from cells and words."""

    def test_listed_and_counted(self) -> None:
        """'repaired: 1 row(s) found' in the checks line, the line and the row on verify.txt."""
        import json

        import pandas as pd

        from agents.bank_parser.repairs import read_repairs
        from agents.bank_parser.statement_facts import read_facts
        from agents.bank_parser.verify import verify

        claim = {"row": 1, "column": "(row)", "before": "02/08/2024. Rent 100.00 896.50",
                 "after": "02/08/2024 | Rent | 100.00 |  | 896.50", "rule": "row found"}
        repairs = read_repairs(b"sandloop-repair " + json.dumps(claim).encode())
        assert repairs and repairs[0].confirmed
        text = "Opening balance 1,000.00\n01/08/2024 Coffee 3.50 996.50\n02/08/2024. Rent 100.00 896.50\n"
        frame = pd.DataFrame({"Date": ["2024-08-01", "2024-08-02"], "Description": ["Coffee", "Rent"],
                              "Debit": [3.5, 100.0], "Credit": [None, None], "Balance": [996.5, 896.5]})
        result = verify(frame, read_facts([(1, text)]), repairs)
        assert "repaired: 1 row(s) found" in result.summary()
        assert "[repair] row 1 (row): 02/08/2024. Rent 100.00 896.50 -> 02/08/2024 | Rent" in result.report()

    def test_a_row_read_from_the_band_is_left_out_of_count_and_coverage(self) -> None:
        """The statement's text never had the faint row's line: with the band's claim the row
        count and coverage hold (and say so); the same row without it fails both."""
        import json

        import pandas as pd

        from agents.bank_parser.repairs import read_repairs
        from agents.bank_parser.statement_facts import read_facts
        from agents.bank_parser.verify import verify

        text = "Opening balance 1,000.00\n01/08/2024 Coffee 3.50 996.50\n03/08/2024 Rent 100.00 796.50\n"
        frame = pd.DataFrame({"Date": ["2024-08-01", "2024-08-02", "2024-08-03"],
                              "Description": ["Coffee", "Gas", "Rent"],
                              "Debit": [3.5, 100.0, 100.0], "Credit": [None, None, None],
                              "Balance": [996.5, 896.5, 796.5]})
        facts = read_facts([(1, text)])
        plain = verify(frame, facts)
        assert {c.name for c in plain.checks if c.state == "failed"} == {"row count", "coverage"}
        claim = {"row": 1, "column": "(row)", "before": f"{BAND_MARK} 02/08/2024 Gas 100.00 896.50",
                 "after": "02/08/2024 | Gas | 100.00 |  | 896.50", "rule": "row found"}
        result = verify(frame, facts, read_repairs(b"sandloop-repair " + json.dumps(claim).encode()))
        assert result.self_consistent, result.report()
        assert "(and 1 row(s) found in the page read again)" in result.report()


class TestFindUnreadRows:
    """find_unread_rows: a row OCR did not read at all, found in the band read again."""

    def test_a_row_missing_from_the_lines_is_read_from_the_band(self) -> None:
        """Row 3 is gone from the OCR lines; the band between rows 2 and 4, read again, holds it
        (beside a noise line): it is inserted and every balance then holds."""
        full = statement(AMOUNTS)
        raw = [row for k, row in enumerate(full) if k != 3]
        asked: list[tuple[int, int]] = []

        def band(upper: int, lower: int) -> list[list[str]]:
            asked.append((upper, lower))
            return [["", "~ . -", "", "", ""], list(full[3][0])]

        fixed, found = srt.find_unread_rows(raw, config(), band)
        assert asked == [(2, 3)]
        assert fixed == full
        assert found[0]["row"] == 3 and found[0]["before"].startswith(BAND_MARK)

    def test_a_band_line_that_does_not_close_is_not_added(self) -> None:
        """A line read in the band whose amount is a cent off is never added."""
        full = statement(AMOUNTS)
        raw = [row for k, row in enumerate(full) if k != 3]
        wrong = list(full[3][0])
        wrong[2] = "2.16"
        fixed, found = srt.find_unread_rows(raw, config(), lambda upper, lower: [wrong])
        assert found == [] and fixed == raw
