"""The parser runtime: the functions every offline parser carries, tested as plain code.

These are project functions (the template copies their source into each parser); calling
them here runs no generated code.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import sys
from decimal import Decimal
from types import SimpleNamespace

import pandas as pd
import pytest

from agents.bank_parser.coders import _ocr_runtime as ort
from agents.bank_parser.coders import _repair_runtime as rrt
from agents.bank_parser.coders import _runtime as rt
from agents.bank_parser.coders import _search_runtime as srt
from agents.bank_parser.coders import _words_runtime as wrt
from agents.bank_parser.coders._template import COMMON, EXTRACTION

#: Names the generated parser's header imports or defines (see _template.HEADER).
PARSER_IMPORTS = {"time", "np", "pytesseract", "re", "csv", "io", "datetime", "Decimal", "pairwise", "pd", "pdfplumber",
                  "SimpleNamespace", "Iterable", "Iterator", "Any", "Word", "RawRow"}
NUMBERS = {"thousands_separator": ",", "decimal_separator": ".",
           "currency_tokens": ["Rs.", "$", "£"], "suffix_signs": {"Dr": "-", "Cr": ""}}


def config(**overrides: object) -> SimpleNamespace:
    base: dict[str, object] = {
        **NUMBERS, "amounts": None, "columns": {}, "dtypes": {}, "date_formats": {},
        "required": [], "reject_unparsable": True, "need_amount": False, "skip_pattern": "",
        "merge_continuations": True, "max_continuation_gap": 20.0,
    }
    return SimpleNamespace(**{**base, **overrides})


def word(text: str, x0: float, top: float, width: float | None = None) -> dict[str, object]:
    width = width if width is not None else 5.0 * len(text)
    return {"text": text, "x0": x0, "x1": x0 + width, "top": top, "bottom": top + 8.0}


class TestModuleRules:
    """What lets the runtime's functions be copied into a parser alone."""

    def test_imports_only_stdlib_and_pandas(self) -> None:
        """The module needs nothing the sandbox image lacks."""
        tree = ast.parse(inspect.getsource(rt))
        modules = {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        modules |= {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert modules <= set(sys.stdlib_module_names) | {"pandas", "pdfplumber"}

    def test_every_function_is_carried_by_some_strategy(self) -> None:
        """Each public runtime function is copied into at least one kind of parser."""
        carried = {fn.__name__ for fn in COMMON} | {fn.__name__ for _, fns in EXTRACTION.values() for fn in fns
                                                    if fn.__module__ == rt.__name__}
        defined = {name for name, obj in vars(rt).items()
                   if inspect.isfunction(obj) and obj.__module__ == rt.__name__}
        assert defined == carried

    def test_functions_use_no_module_constants(self) -> None:
        """Copied alone, a function may only use builtins, the parser's imports and other functions."""
        functions = {n for n, o in vars(rt).items() if inspect.isfunction(o)}
        functions |= {n for n, o in vars(ort).items() if inspect.isfunction(o)}
        functions |= {n for n, o in vars(rrt).items() if inspect.isfunction(o)}
        functions |= {n for n, o in vars(wrt).items() if inspect.isfunction(o)}
        functions |= {n for n, o in vars(srt).items() if inspect.isfunction(o)}
        for fn in {*COMMON, *(f for _, fns in EXTRACTION.values() for f in fns)}:
            tree = ast.parse(inspect.getsource(fn))
            local = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
            local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            local |= {(a.asname or a.name) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                      for a in n.names}  # imports inside a function travel with it
            local |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}  # and helpers
            loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            unknown = loaded - local - functions - PARSER_IMPORTS - set(dir(builtins))
            assert not unknown, (fn.__name__, unknown)


class TestNumbers:
    """clean_number: amount text as a CSV holds it."""

    @pytest.mark.parametrize(("text", "cleaned"), [
        ("1,935.30", "1935.30"), ("$1,935.30", "1935.30"), ("Rs. 12,000.00", "12000.00"),
        ("(250.00)", "-250.00"), ("($250.00)", "-250.00"), ("250.00-", "-250.00"),
        ("1,000.00 Cr", "1000.00"), ("1,000.00 Dr", "-1000.00"), ("-£3.10", "-3.10"),
        ("", ""), ("Balance", None), ("12 Aug", None),
    ])
    def test_clean_number(self, text: str, cleaned: str | None) -> None:
        """Separators, currency, parentheses, trailing minus and Dr/Cr suffixes are undone."""
        assert rt.clean_number(text, config()) == cleaned

    def test_decimal_comma(self) -> None:
        """With '.' for thousands and ',' for decimals, 1.234,56 is 1234.56."""
        cfg = config(thousands_separator=".", decimal_separator=",")
        assert rt.clean_number("1.234,56", cfg) == "1234.56"


class TestDates:
    """clean_date and format_date."""

    def test_kept_when_formats_agree(self) -> None:
        """Equal formats keep the PDF's text as it is."""
        assert rt.clean_date("05 Aug 2024", ("%d %b %Y", "%d %b %Y")) == "05 Aug 2024"

    def test_converted_without_padding(self) -> None:
        """%-d and %-m write day and month without a leading zero."""
        assert rt.clean_date("Aug 05, 2024", ("%b %d, %Y", "%-d/%-m/%Y")) == "5/8/2024"

    def test_not_a_date(self) -> None:
        """Text that does not read in the PDF format is invalid (None), empty stays empty."""
        assert rt.clean_date("Opening", ("%d-%m-%Y", "%d-%m-%Y")) is None
        assert rt.clean_date("  ", ("%d-%m-%Y", "%d-%m-%Y")) == ""


class TestSignedAmount:
    """The row's amount under each amount model, credits positive."""

    def test_split(self) -> None:
        """Separate columns: credit minus debit, whatever signs they are printed with."""
        cfg = config(amounts={"kind": "split", "debit": 0, "credit": 1})
        assert rt.signed_amount(["1,000.00", ""], cfg) == (Decimal("-1000.00"), True)
        assert rt.signed_amount(["", "20.50"], cfg) == (Decimal("20.50"), True)
        assert rt.signed_amount(["", ""], cfg) == (None, True)
        assert rt.signed_amount(["x", ""], cfg)[1] is False

    def test_marker(self) -> None:
        """One unsigned amount and a Dr/Cr column."""
        cfg = config(amounts={"kind": "marker", "amount": 0, "marker": 1, "debit_markers": ["dr", "d"]})
        assert rt.signed_amount(["12.00", "Dr"], cfg) == (Decimal("-12.00"), True)
        assert rt.signed_amount(["12.00", "CR"], cfg) == (Decimal("12.00"), True)

    def test_signed_with_suffix(self) -> None:
        """A Dr suffix makes the amount negative."""
        cfg = config(amounts={"kind": "signed", "amount": 0})
        assert rt.signed_amount(["5.00 Dr"], cfg) == (Decimal("-5.00"), True)

    def test_derived_columns(self) -> None:
        """Debit and credit parts are unsigned; the signed column keeps the sign."""
        assert rt.derived_text("debit", Decimal("-3.50")) == "3.50"
        assert rt.derived_text("credit", Decimal("-3.50")) == ""
        assert rt.derived_text("signed", Decimal("-3.50")) == "-3.50"
        assert rt.derived_text("debit", None) == ""


class TestRows:
    """collect_rows: which rows are kept and which lines continue them."""

    CONFIG = dict(
        columns={"Date": [0, "date"], "Description": [1, "text"], "Amount": ["signed", "number"],
                 "Balance": [3, "number"]},
        date_formats={"Date": ["%d-%m-%Y", "%d-%m-%Y"]},
        amounts={"kind": "split", "debit": 2, "credit": 4},
        required=["Date", "Balance"], need_amount=True,
        skip_pattern=r"\b(opening|closing)\s+balance\b|^\s*totals?\b",
    )

    def rows(self, raw: list[tuple[list[str], float]], **overrides: object) -> list[dict[str, str]]:
        return rt.collect_rows(raw, config(**{**self.CONFIG, **overrides}))

    def test_balance_rows_and_footers_are_dropped(self) -> None:
        """Opening balance (no amount), totals and page footers are not transactions."""
        raw = [
            (["01-08-2024", "Opening Balance", "", "100.00", ""], float("inf")),
            (["02-08-2024", "Coffee", "3.00", "97.00", ""], 12.0),
            (["", "Total", "3.00", "", "0.00"], 12.0),
            (["", "Page 1 of 2", "", "", ""], 40.0),
        ]
        assert self.rows(raw) == [{"Date": "02-08-2024", "Description": "Coffee", "Amount": "-3.00",
                                   "Balance": "97.00"}]

    def test_kept_when_the_csv_keeps_them(self) -> None:
        """Without the amount and summary tests, a dated opening balance is a row."""
        raw = [(["01-08-2024", "Opening Balance", "", "100.00", ""], float("inf"))]
        assert len(self.rows(raw, need_amount=False, skip_pattern="")) == 1

    def test_wrapped_lines_join_the_row_above(self) -> None:
        """Text-only lines close under a row continue its description."""
        raw = [
            (["02-08-2024", "Transfer to", "", "97.00", "5.00"], float("inf")),
            (["", "a friend", "", "", ""], 10.0),
            (["", "for lunch", "", "", ""], 10.0),
        ]
        assert self.rows(raw)[0]["Description"] == "Transfer to a friend for lunch"

    def test_text_after_a_dropped_row_is_not_glued_on(self) -> None:
        """A text line under a footer or summary row never continues the transaction before it."""
        raw = [
            (["02-08-2024", "Coffee", "3.00", "97.00", ""], float("inf")),
            (["", "Total", "3.00", "", ""], 10.0),
            (["", "thank you for banking with us", "", "", ""], 10.0),
        ]
        assert self.rows(raw)[0]["Description"] == "Coffee"

    def test_far_lines_do_not_continue(self) -> None:
        """A text line further than the gap limit stays apart."""
        raw = [(["02-08-2024", "Coffee", "3.00", "97.00", ""], float("inf")),
               (["", "disclaimer", "", "", ""], 60.0)]
        assert self.rows(raw)[0]["Description"] == "Coffee"


class TestHeader:
    """Finding the header among positioned words."""

    def test_stacked_labels_are_one_label(self) -> None:
        """'Money' over 'Out' and 'Posting' over 'Date' read as two labels."""
        lines = [[word("Posting", 40, 100), word("Money", 300, 100)],
                 [word("Date", 40, 110), word("Out", 310, 110)]]
        groups = rt.header_groups(lines)
        assert [" ".join(w["text"] for w in g) for g in groups] == ["Posting Date", "Money Out"]

    def test_two_line_header_is_found(self) -> None:
        """find_header returns the line after both header lines and one span per label."""
        lines = [[word("Posting", 40, 100), word("Money", 300, 100)],
                 [word("Date", 40, 110), word("Out", 310, 110)],
                 [word("01-08-2024", 40, 125), word("5.00", 310, 125)]]
        cfg = SimpleNamespace(header_labels=["Posting Date", "Money Out"], header_lines=2)
        end, spans = rt.find_header(lines, cfg)
        assert end == 2 and spans == [(40, 75), (300, 325)]

    def test_duplicate_labels_are_found_in_order(self) -> None:
        """Two columns called 'Date' get their own spans."""
        line = [word("Date", 40, 100), word("Date", 120, 100), word("Amount", 300, 100)]
        cfg = SimpleNamespace(header_labels=["Date", "Date", "Amount"], header_lines=1)
        assert rt.find_header([line], cfg)[1] == [(40, 60), (120, 140), (300, 330)]
        assert rt.header_positions(["Date", "Date", "Amount"], ["Date", "Date", "Amount"]) == [0, 1, 2]

    def test_valley_ignores_a_footer_crossing_the_gap(self) -> None:
        """A word crossing the real gap once does not move the cut into a column's word spaces."""
        rows = [[word("01", 40, t, 9), word("September", 52, t, 40), word("Coffee", 120, t)]
                for t in range(0, 200, 12)]
        footer = [word("computer-generated", 60, 300, 80)]
        cut = rt.emptiest_x(46, 140, [w for line in rows for w in line] + footer)
        assert 92 < cut < 120


class TestFrame:
    """build_frame and cast."""

    def test_reads_like_the_csv(self) -> None:
        """Values go through read_csv: zero-padded references stay text when the column is text."""
        cfg = config(columns={"Ref": [0, "text"], "Amount": [1, "number"]},
                     dtypes={"Ref": "str", "Amount": "float64"})
        frame = rt.build_frame([{"Ref": "000451", "Amount": "1.50"}, {"Ref": "CHQ9", "Amount": ""}], cfg)
        assert frame["Ref"].tolist() == ["000451", "CHQ9"]
        assert frame["Amount"].isna().tolist() == [False, True]

    def test_impossible_dtype_is_left_for_the_comparison(self) -> None:
        """A column that cannot become int64 stays as read instead of crashing the parser."""
        series = pd.Series([1.0, float("nan")])
        assert rt.cast(series, "int64") is series
