"""Repair of OCR misreads by the running balance (issue 24): the runtime's pure functions.

A scan's parser carries these functions; here they run as plain project code on rows of
cell texts. What they must guarantee: a cell is changed only when exactly one candidate
reading, among every cell of the broken stretch, makes every link of it hold to the cent
on both sides (the row before *and* the row after), and no candidate changes a digit.
"""

from __future__ import annotations

import ast
import inspect
import io
import sys
from contextlib import redirect_stderr
from decimal import Decimal
from types import ModuleType, SimpleNamespace

import pytest

from agents.bank_parser.coders import _repair_runtime as rrt
from agents.bank_parser.coders import _search_runtime as srt
from agents.bank_parser.coders import _words_runtime as wrt
from agents.bank_parser.coders._template import EXTRACTION, REPAIR, SEARCH, WORDS, ocr_module_source
from agents.bank_parser.repairs import read_repairs

D = Decimal
NUMBERS = {"thousands_separator": ",", "decimal_separator": ".", "currency_tokens": ["Rs.", "$"],
           "suffix_signs": {"Dr": "-", "Cr": ""}}
LABELS = ["Date", "Description", "Debit", "Credit", "Balance"]


def config(**overrides: object) -> SimpleNamespace:
    """A split Debit/Credit statement with a running balance in the last column."""
    base: dict[str, object] = {
        **NUMBERS, "header_labels": LABELS, "balance_index": 4,
        "amounts": {"kind": "split", "debit": 2, "credit": 3},
        "columns": {"Date": [0, "date"], "Description": [1, "text"], "Debit": ["debit", "number"],
                    "Credit": ["credit", "number"], "Balance": [4, "number"]},
        "dtypes": {}, "date_formats": {"Date": ["%d-%m-%Y", "%d-%m-%Y"]}, "required": ["Date", "Balance"],
        "reject_unparsable": True, "need_amount": True,
        "skip_pattern": r"\b(opening|closing)\s+balance\b|\bbrought\s+forward\b",
        "merge_continuations": True, "max_continuation_gap": 20.0,
    }
    return SimpleNamespace(**{**base, **overrides})


def statement(cents: list[int], opening: int = 100_000) -> list[tuple[list[str], float]]:
    """Raw rows of a statement with these signed amounts, balances added up exactly."""
    rows: list[tuple[list[str], float]] = []
    balance = opening
    for day, amount in enumerate(cents, start=1):
        balance += amount
        debit, credit = (f"{-amount / 100:,.2f}", "") if amount < 0 else ("", f"{amount / 100:,.2f}")
        rows.append(([f"{day:02d}-08-2024", f"item {day}", debit, credit, f"{balance / 100:,.2f}"], 0.0))
    return rows


def with_cell(rows: list[tuple[list[str], float]], row: int, column: int, text: str) -> list[tuple[list[str], float]]:
    """The rows with one cell read differently."""
    out = [(list(cells), gap) for cells, gap in rows]
    out[row][0][column] = text
    return out


def opening_row(cents: int = 100_000) -> tuple[list[str], float]:
    return (["01-08-2024", "Opening balance", "", "", f"{cents / 100:,.2f}"], 0.0)


AMOUNTS = [-1250, 250_000, -50_000, -215, 10_000, -1_000, -20_000, 3_333]


@pytest.mark.parametrize(("module", "functions"), [(rrt, REPAIR), (srt, SEARCH), (wrt, WORDS)],
                         ids=["balance", "search", "words"])
class TestModuleRules:
    """What lets the repair functions (by the balance, issue 24; the search for a lost row and
    the repair of words, issue 46) be copied into a parser alone."""

    def test_imports_only_stdlib_and_the_runtime(self, module: ModuleType, functions: tuple[object, ...]) -> None:
        """The module needs nothing the sandbox image lacks (nothing new runs on the host)."""
        tree = ast.parse(inspect.getsource(module))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        outside = {m for m in modules if m.split(".")[0] not in sys.stdlib_module_names}
        assert outside <= {"agents.bank_parser.coders._runtime", "agents.bank_parser.coders._repair_runtime"}

    def test_every_function_is_carried_by_ocr_parsers(self, module: ModuleType, functions: tuple[object, ...]) -> None:
        """Each function of the module is copied into every OCR parser."""
        defined = {name for name, obj in vars(module).items()
                   if inspect.isfunction(obj) and obj.__module__ == module.__name__}
        assert defined == {fn.__name__ for fn in functions}  # type: ignore[attr-defined]
        assert set(functions) <= set(EXTRACTION["ocr_words"][1])
        assert all(f"def {fn.__name__}(" in ocr_module_source() for fn in functions)  # type: ignore[attr-defined]


class TestCandidates:
    """repair_candidates: the other readings of one amount cell, one per rule."""

    @pytest.mark.parametrize(("text", "rule", "candidate"), [
        ("1242914", "decimal point", "12429.14"),
        ("215", "decimal point", "2.15"),
        ("12,42914", "decimal point", "12429.14"),
        ("45,56021 Cr", "decimal point", "45560.21 Cr"),
        ("($1,23456)", "decimal point", "(1234.56)"),
        ("724.03", "sign", "-724.03"),
        ("(724.03", "parenthesis", "(724.03)"),
        ("724.03)", "parenthesis", "(724.03)"),
        ("S,234.56", "letters", "5,234.56"),
        ("1,2O0.00", "letters", "1,200.00"),
        ("l23.45", "letters", "123.45"),
        ("Rs. 1,2O0.00", "letters", "1,200.00"),
    ])
    def test_rule(self, text: str, rule: str, candidate: str) -> None:
        """Each rule gives its reading of the cell."""
        assert (rule, candidate) in rrt.repair_candidates(text, config())

    def test_decimal_comma(self) -> None:
        """With a decimal comma the point goes back as a comma."""
        cfg = config(thousands_separator=".", decimal_separator=",")
        assert ("decimal point", "1234,56") in rrt.repair_candidates("1.23456", cfg)

    @pytest.mark.parametrize("text", ["", "Balance", "Opening balance", "Page 1 of 2"])
    def test_no_candidates_without_an_amount(self, text: str) -> None:
        """Text that holds no number is never offered a reading."""
        assert [c for c in rrt.repair_candidates(text, config()) if c[0] != "sign"] == []

    def test_candidates_differ_from_the_reading_and_each_other(self) -> None:
        """A candidate that reads as the same amount as the cell, or as another candidate, is dropped."""
        cfg = config()
        for text in ("1,234.56", "98306 Dr", "12.50-", "-3.10", "1234.56"):
            values = [rrt.clean_number(c, cfg) for _, c in rrt.repair_candidates(text, cfg)]
            assert rrt.clean_number(text, cfg) not in values
            assert len(values) == len(set(values))
        assert rrt.repair_candidates("1,234.56", cfg) == [("sign", "-1,234.56")]

    def test_no_candidate_changes_a_digit(self) -> None:
        """Every candidate keeps the cell's digits (letters read as digits count as those)."""
        cfg = config()
        for text in ("1242914", "45,56021 Cr", "S,234.56", "(724.03", "l23.45", "9O.0l"):
            for rule, candidate in rrt.repair_candidates(text, cfg):
                read = text.translate(str.maketrans("SsOolI|", "5500111")) if rule == "letters" else text
                assert [c for c in candidate if c.isdigit()] == [c for c in read if c.isdigit()], (text, rule)


class TestChain:
    """link_holds and chain_orientation: which way the balance runs."""

    def test_oldest_first(self) -> None:
        """The later row's balance is the earlier balance plus the later row's amount."""
        assert rrt.link_holds((D(0), D("10.00")), (D("-2.50"), D("7.50")), (1, False))
        assert not rrt.link_holds((D(0), D("10.00")), (D("-2.50"), D("7.49")), (1, False))

    def test_newest_first(self) -> None:
        """Printed newest first, the upper row is the later one."""
        assert rrt.link_holds((D("-2.50"), D("7.50")), (D(0), D("10.00")), (1, True))

    def test_unreadable_values_never_hold(self) -> None:
        """A missing balance or an unreadable amount breaks the link."""
        assert not rrt.link_holds((D(0), None), (D(1), D(1)), (1, False))
        assert not rrt.link_holds((D(0), D(1)), (None, D(1)), (1, False))

    def test_orientation_by_most_links(self) -> None:
        """The reading under which most links hold wins; a sign of -1 is found too."""
        rows = statement(AMOUNTS)
        values = [rrt.chain_values(cells, config()) for cells, _ in rows]
        assert rrt.chain_orientation(values) == (1, False)
        assert rrt.chain_orientation(values[::-1]) == (1, True)
        flipped = [(None if a is None else -a, b) for a, b in values]
        assert rrt.chain_orientation(flipped) == (-1, False)

    def test_no_orientation_when_most_links_break(self) -> None:
        """A table whose balances mostly disagree is not understood: nothing to repair against."""
        values = [(D(1), D(k * 7)) for k in range(6)]
        assert rrt.chain_orientation(values) is None


class TestRepair:
    """repair_rows: which misreads are repaired, and when nothing is changed."""

    def repair(self, rows: list[tuple[list[str], float]], **overrides: object) -> tuple[list, list]:
        return rrt.repair_rows(rows, config(**overrides))

    def test_consistent_rows_are_left_alone(self) -> None:
        """A chain that holds everywhere gets no repair."""
        rows = statement(AMOUNTS)
        repaired, repairs = self.repair(rows)
        assert repaired == rows and repairs == []

    def test_balance_without_its_decimal_point(self) -> None:
        """1242914 for 12,429.14 (the issue's case): the only reading that fits both neighbours."""
        rows = statement(AMOUNTS)
        truth = rows[3][0][4]
        read = truth.replace(".", "")
        repaired, repairs = self.repair(with_cell(rows, 3, 4, read))
        assert rrt.clean_number(repaired[3][0][4], config()) == rrt.clean_number(truth, config())
        assert repairs == [{"row": 3, "column": "Balance", "before": read,
                            "after": truth.replace(",", ""), "rule": "decimal point"}]

    def test_amount_without_its_decimal_point(self) -> None:
        """215 for 2.15 in the Debit column is repaired from the balances around it."""
        repaired, repairs = self.repair(with_cell(statement(AMOUNTS), 3, 2, "215"))
        assert repaired[3][0][2] == "2.15"
        assert [(r["row"], r["column"], r["rule"]) for r in repairs] == [(3, "Debit", "decimal point")]

    def test_lost_minus_on_a_negative_balance(self) -> None:
        """A balance below zero read without its minus gets it back."""
        rows = statement([-1_000, -120_000, -500, 2_000, -300], opening=100_000)
        assert rows[2][0][4] == "-215.00"
        repaired, repairs = self.repair(with_cell(rows, 2, 4, "215.00"))
        assert repaired[2][0][4] == "-215.00" and repairs[0]["rule"] == "sign"

    def test_lost_parenthesis(self) -> None:
        """(724.03 with its closing parenthesis lost is not a number: the row comes back."""
        rows = statement([-1_000, -120_000, -500, 2_000, -300], opening=100_000)
        rows = [(cells[:4] + [f"({cells[4][1:]})" if cells[4].startswith("-") else cells[4]], gap)
                for cells, gap in rows]
        broken = with_cell(rows, 2, 4, rows[2][0][4][:-1])
        repaired, repairs = self.repair(broken)
        assert repaired[2][0][4] == rows[2][0][4]
        assert repairs == [{"row": 2, "column": "Balance", "before": "(215.00", "after": "(215.00)",
                            "rule": "parenthesis"}]

    def test_letter_for_a_digit_brings_the_row_back(self) -> None:
        """S for 5 makes the cell unreadable and the row no transaction; the letter rule fixes both."""
        rows = statement(AMOUNTS)
        broken = with_cell(rows, 5, 2, "l0.00")
        assert rrt.clean_number("l0.00", config()) is None
        repaired, repairs = self.repair(broken)
        assert repaired[5][0][2] == "10.00"
        assert repairs == [{"row": 5, "column": "Debit", "before": "l0.00", "after": "10.00", "rule": "letters"}]
        assert repaired[4] == rows[4]

    def test_several_separate_misreads(self) -> None:
        """Misreads far enough apart are each repaired; rows are numbered as the frame's rows."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 1, 4, rows[1][0][4].replace(".", "")), 5, 2, "1000")
        broken.insert(3, (["", "continued text", "", "", ""], 5.0))
        repaired, repairs = self.repair(broken)
        assert [(r["row"], r["column"]) for r in repairs] == [(1, "Balance"), (5, "Debit")]
        assert repaired[6][0][2] == "10.00"

    def test_first_and_last_rows_need_an_anchor(self) -> None:
        """A row at either end has one neighbour only: not repaired, unless a printed
        opening (or closing) balance row stands beyond it."""
        rows = statement(AMOUNTS)
        first = with_cell(rows, 0, 4, rows[0][0][4].replace(".", ""))
        assert self.repair(first)[1] == []
        repaired, repairs = self.repair([opening_row(), *first])
        assert repaired[1][0][4] == rows[0][0][4].replace(",", "") and repairs[0]["row"] == 0
        amount = with_cell(rows, 0, 2, "1250")
        assert self.repair([opening_row(), *amount])[0][1][0][2] == "12.50"
        last = with_cell(rows, len(rows) - 1, 4, rows[-1][0][4].replace(".", ""))
        assert self.repair(last)[1] == []
        closing = (["09-08-2024", "Closing balance", "", "", rows[-1][0][4]], 0.0)
        assert self.repair([*last, closing])[1][0]["row"] == len(rows) - 1

    def test_two_misreads_side_by_side_are_repaired_as_a_pair(self) -> None:
        """Two broken cells in neighbouring rows: no single edit fits, the one pair that does is made."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 3, 4, rows[3][0][4].replace(".", "")), 4, 3, "10000")
        repaired, repairs = self.repair(broken)
        assert rrt.stretch_repairs([2, 3, 4], *self.chain(broken)) == []
        assert [(r["row"], r["column"], r["after"], r["rule"]) for r in repairs] == [
            (3, "Balance", rows[3][0][4].replace(",", ""), "decimal point"), (4, "Credit", "100.00", "decimal point")]
        assert repaired[:3] == rows[:3] and repaired[5:] == rows[5:]

    def test_an_amount_and_its_balance_on_one_row(self) -> None:
        """Both figures of one row lost their point: the pair on that row is repaired."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 3, 2, "215"), 3, 4, rows[3][0][4].replace(".", ""))
        repaired, repairs = self.repair(broken)
        assert repaired[3][0][2] == "2.15" and [r["column"] for r in repairs] == ["Debit", "Balance"]

    def test_no_pair_when_two_pairs_fit(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """More than one fitting pair: the rows stay as read."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 3, 4, rows[3][0][4].replace(".", "")), 4, 3, "10000")
        pairs = rrt.pair_repairs
        monkeypatch.setattr(rrt, "pair_repairs", lambda *args: pairs(*args) * 2)
        assert self.repair(broken) == (broken, [])

    def test_a_reread_agreeing_with_a_rule_is_one_option(self) -> None:
        """A cell read again as the rule would repair it offers that value once, so the pair
        stays the only one (and is credited to the re-read)."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 3, 4, rows[3][0][4].replace(".", "")), 4, 3, "10000")
        reread = lambda index, position: rows[index][0][position]  # noqa: E731 - the truth, read again
        (pair,) = rrt.pair_repairs([2, 3, 4], *self.chain(broken), reread)
        assert [rule for *_, rule, _text in pair] == ["re-read", "re-read"]

    def test_no_pair_search_over_a_long_broken_stretch(self) -> None:
        """A stretch offering more readings than the limit is left as read."""
        rows = statement(AMOUNTS)
        broken = with_cell(with_cell(rows, 3, 4, rows[3][0][4].replace(".", "")), 4, 3, "10000")
        assert len(rrt.pair_repairs([2, 3, 4, 5], *self.chain(broken))) == 1
        assert rrt.pair_repairs([2, 3, 4, 5], *self.chain(broken), None, 3) == []

    def chain(self, rows: list[tuple[list[str], float]]) -> tuple[object, ...]:
        """(members, raw rows, values, orientation, config) as repair_rows computes them."""
        cfg = config()
        members = rrt.chain_members(rows, cfg)
        values = [rrt.chain_values(rows[i][0], cfg) for i, _ in members]
        return members, rows, values, rrt.chain_orientation(values), cfg

    def test_no_repair_when_two_readings_fit(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """More than one fitting candidate in a stretch: the rows stay as read."""
        broken = with_cell(statement(AMOUNTS), 3, 2, "215")
        fits = rrt.stretch_repairs
        monkeypatch.setattr(rrt, "stretch_repairs", lambda *args: fits(*args) * 2)
        repaired, repairs = self.repair(broken)
        assert repairs == [] and repaired == broken

    def test_a_reading_that_fits_one_side_only_is_refused(self) -> None:
        """A candidate that mends the link above but breaks the one below is no repair."""
        rows = statement(AMOUNTS)
        # row 3's balance lost its point (its reading would mend the link above), but row 4's
        # balance is garbled too, so the link below still breaks
        broken = with_cell(with_cell(rows, 3, 4, rows[3][0][4].replace(".", "")), 4, 4, "999.99")
        fits_above = [t for r, t in rrt.repair_candidates(broken[3][0][4], config()) if r == "decimal point"]
        assert fits_above == [rows[3][0][4].replace(",", "")]
        repaired, repairs = self.repair(broken)
        assert repairs == [] and repaired == broken

    def test_newest_first_statement(self) -> None:
        """A statement printed newest first is repaired the same way."""
        rows = statement(AMOUNTS)[::-1]
        broken = with_cell(rows, 4, 4, rows[4][0][4].replace(".", ""))
        repaired, repairs = self.repair(broken)
        assert repaired[4][0][4] == rows[4][0][4].replace(",", "")
        assert repairs[0]["row"] == 4

    def test_signed_amount_column(self) -> None:
        """One signed Amount column: the lost decimal point of a negative amount is put back."""
        cfg = {"amounts": {"kind": "signed", "amount": 2}, "header_labels": ["Date", "Description", "Amount",
                                                                              "Unused", "Balance"],
               "columns": {"Date": [0, "date"], "Description": [1, "text"], "Amount": [2, "number"],
                           "Balance": [4, "number"]}}
        rows = [(cells[:2] + [f"-{cells[2]}" if cells[2] else cells[3], "", cells[4]], gap)
                for cells, gap in statement(AMOUNTS)]
        repaired, repairs = self.repair(with_cell(rows, 3, 2, "-215"), **cfg)
        assert repaired[3][0][2] == "-2.15" and repairs[0]["column"] == "Amount"

    def test_without_a_balance_nothing_is_repaired(self) -> None:
        """No balance column (or no amount model): the chain cannot guide anything."""
        broken = with_cell(statement(AMOUNTS), 3, 2, "215")
        assert self.repair(broken, balance_index=None)[1] == []
        assert self.repair(broken, amounts=None)[1] == []


class TestReport:
    """report_repairs: what the parser tells the controller, and the host reading it back."""

    def test_round_trip(self) -> None:
        """Each repair is one marked line on stderr that the host decodes and confirms."""
        _, repairs = rrt.repair_rows(with_cell(statement(AMOUNTS), 3, 2, "215"), config())
        stream = io.StringIO()
        with redirect_stderr(stream):
            rrt.report_repairs(repairs)
        read = read_repairs(stream.getvalue().encode())
        assert [(r.row, r.column, r.before, r.after, r.rule, r.confirmed) for r in read] == [
            (3, "Debit", "215", "2.15", "decimal point", True)]


class TestReread:
    """A scan's parser reads the cells around a break again before it tries candidate readings."""

    def reader(self, answers: dict[tuple[int, int], str]) -> tuple[list[tuple[int, int]], object]:
        asked: list[tuple[int, int]] = []

        def reread(index: int, position: int) -> str | None:
            asked.append((index, position))
            return answers.get((index, position))

        return asked, reread

    def test_a_fitting_reread_wins(self) -> None:
        """The cell read again as 2.15 is taken as a re-read, not as a guessed decimal point."""
        broken = with_cell(statement(AMOUNTS), 3, 2, "215")
        asked, reread = self.reader({(3, 2): "2.15"})
        repaired, repairs = rrt.repair_rows(broken, config(), reread)
        assert repaired[3][0][2] == "2.15" and repairs[0]["rule"] == "re-read"
        assert (3, 2) in asked

    def test_a_reread_that_does_not_fit_falls_back_to_candidates(self) -> None:
        """Read again as 2.16 (still wrong) or not at all: the candidate reading decides."""
        broken = with_cell(statement(AMOUNTS), 3, 2, "215")
        for answers in ({(3, 2): "2.16"}, {}, {(3, 2): "not a number"}):
            _, reread = self.reader(answers)
            repaired, repairs = rrt.repair_rows(broken, config(), reread)
            assert repaired[3][0][2] == "2.15" and repairs[0]["rule"] == "decimal point", answers

    def test_a_cell_garbled_past_every_rule_comes_back_by_a_reread(self) -> None:
        """'Tf 633.37' reads as no number and no rule mends it: the row is still in the chain,
        so a re-read of the cell can bring it back; without one the rows stay as read."""
        rows = statement(AMOUNTS)
        broken = with_cell(rows, 4, 4, "Tf " + rows[4][0][4][-6:])
        assert rrt.clean_number(broken[4][0][4], config()) is None
        assert rrt.repair_rows(broken, config()) == (broken, [])
        repaired, repairs = rrt.repair_rows(broken, config(), lambda index, position: rows[index][0][position])
        assert repaired[4] == rows[4] and [(r["row"], r["rule"]) for r in repairs] == [(4, "re-read")]

    def test_only_cells_around_a_break_are_read_again(self) -> None:
        """A chain that holds costs no OCR; a break costs only its stretch's filled amount cells."""
        asked, reread = self.reader({})
        rrt.repair_rows(statement(AMOUNTS), config(), reread)
        assert asked == []
        rrt.repair_rows(with_cell(statement(AMOUNTS), 3, 2, "215"), config(), reread)
        assert asked and {index for index, _ in asked} <= {2, 3}
        assert all(statement(AMOUNTS)[i][0][p] for i, p in asked)


class TestUnrotate:
    """unrotate: a point of the deskewed page carried back onto the page as scanned."""

    @pytest.mark.parametrize("angle", [-2.5, -0.7, 0.0, 0.4, 1.2])
    def test_inverse_of_the_deskew_rotation(self, angle: float) -> None:
        """A dark dot turned as prepare() turns the page is found again where it was."""
        import numpy as np
        from PIL import Image

        from agents.bank_parser.coders import _ocr_runtime as ort

        page = np.full((300, 400), 255, dtype="uint8")
        page[78:83, 298:303] = 0
        turned = np.asarray(Image.fromarray(page).rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255))
        ys, xs = np.nonzero(turned < 128)
        x, y = ort.unrotate(float(xs.mean()) + 0.5, float(ys.mean()) + 0.5, 400.0, 300.0, angle)
        assert abs(x - 300.5) < 1.5 and abs(y - 80.5) < 1.5
