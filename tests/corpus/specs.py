"""The corpus's banks as declarative specs: which layout features each statement combines.

A spec says what the PDF looks like (columns, labels, ruling, headers, footers, balance
rows, wrapped descriptions, date and amount formats) and what the expected CSV wants
(column names, order, date format, separate or signed amounts). The generator turns a spec
and a seed into a PDF and a CSV; the offline coder must work out everything from those two
files alone, never from the bank's name.

Fields a column can show (in the PDF and in the CSV):

``date``, ``value_date``
    the posting date and the value date (0-2 days later);
``description``
    the narration; may wrap onto several lines in the PDF, always one line in the CSV;
``ref``
    a reference or cheque number (a string in the CSV unless every value is numeric);
``debit``, ``credit``
    unsigned amounts, one of them empty per transaction;
``amount``
    in the PDF, the one amount column (signed, or unsigned next to a ``marker`` column or
    with a " Dr"/" Cr" suffix, per :attr:`BankSpec.amount_style`); in the CSV, the signed
    amount (credits positive, debits negative);
``marker``
    "Dr"/"Cr" (in the CSV: "DR"/"CR");
``balance``
    the running balance after the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Field = Literal[
    "date", "value_date", "description", "ref", "debit", "credit", "amount", "marker", "balance"
]
Align = Literal["left", "right", "center"]
AmountStyle = Literal["split", "signed", "marker", "suffix"]
BalanceRows = Literal["none", "dated", "undated"]


@dataclass(frozen=True)
class Column:
    """One column of the PDF's table: what it shows, its label (``\\n``: stacked), its width."""

    field: Field
    label: str
    width: float
    align: Align = "left"


@dataclass(frozen=True)
class BankSpec:
    """One invented bank's statement layout and the CSV its parser must produce."""

    name: str
    """The target's folder name under data/."""
    title: str
    """The letterhead's bank name (invented)."""
    summary: str
    """What this statement combines, in one line (docs and test ids)."""
    columns: tuple[Column, ...]
    """The PDF's table, left to right."""
    csv: tuple[tuple[str, Field], ...]
    """The expected CSV's columns in order: (name, field)."""
    rows: int
    """Transactions in the statement."""
    ruled: bool = False
    """Draw the table's grid (pdfplumber's extract_tables finds it) or leave it borderless."""
    header_every_page: bool = True
    """Repeat the table header on every page, or print it on the first page only."""
    header: bool = True
    """Print the table header at all (False: the columns show only by alignment; issue 24)."""
    shaded_header: bool = False
    """Put a grey band behind the header (its edges make pdfplumber see a one-cell table)."""
    running_head: bool = True
    """A short bank line at the top of every page after the first."""
    footer: bool = True
    """'Page X of Y' and a disclaimer at the foot of every page."""
    opening_row: BalanceRows = "dated"
    """An 'Opening Balance' row at the top of the table."""
    closing_row: BalanceRows = "none"
    """A 'Closing Balance' row at the end of the table."""
    carried_forward: BalanceRows = "none"
    """'Balance carried forward' at a page's foot and 'brought forward' under the next header."""
    totals: bool = False
    """Total debits/credits lines after the table (summary, not transactions)."""
    keeps_balance_rows: bool = False
    """The CSV keeps the opening and closing balance rows (empty amounts)."""
    wrap_lines: int = 1
    """Most lines a description wraps onto (1: never wraps)."""
    pdf_date: str = "%d-%m-%Y"
    csv_date: str = "%d-%m-%Y"
    """strftime formats; ``%-d``/``%-m`` mean no zero padding."""
    amount_style: AmountStyle = "split"
    negative: Literal["minus", "parens", "trailing"] = "minus"
    """How a signed amount column shows debits: -1,234.56, (1,234.56) or 1,234.56-."""
    suffixes: tuple[str, str] = (" Dr", " Cr")
    """The debit and credit suffixes of the ``suffix`` amount style and of ``balance_suffix``."""
    thousands: bool = True
    grouping: Literal["western", "indian"] = "western"
    """Thousands in threes (1,000,000.00) or Indian lakhs and crores (10,00,000.00)."""
    decimal_comma: bool = False
    """Write 1.234,56 (thousands '.', decimals ',') instead of 1,234.56."""
    thousands_space: bool = False
    """With ``decimal_comma``: thousands separated by a space (1 234,56) instead of '.'."""
    amount_scale: int = 1
    decimals: Literal[0, 2] = 2
    """Decimals an amount prints with: 0 for a currency without minor units (yen, won)."""
    """Every amount and balance times this (10: balances in lakhs for Indian grouping)."""
    landscape: bool = False
    """A4 turned on its side (a wide table)."""
    periods: int = 1
    """Statement periods in the one file; each starts on a new page with its own letterhead,
    opening and closing rows and page numbers, as when two months' statements are joined."""
    currency: str = ""
    """Prefix of every amount in the PDF, e.g. "$" or "Rs. "."""
    balance_suffix: bool = False
    """The balance carries " Cr" (or " Dr" when overdrawn)."""
    layout: Literal["table", "cards"] = "table"
    """table: one row per transaction; cards: a block of 'label: value' lines each (no table)."""
    column_rules: bool = False
    """Rule the table's columns only: vertical lines, no row or header lines (issue 35). A
    blank debit or credit cell then shows as nothing at all in the page's text."""
    opening_in_header: bool = False
    """Print the opening balance in the account block above the table (issue 35), with
    ``opening_row="none"``: no table row gives it."""
    overdrawn: bool = False
    """The account goes below zero halfway through (balances printed with the debit suffix
    under ``balance_suffix``)."""
    panels: int = 1
    """Tables side by side on a page (issue 35): rows run down the left one, then the right;
    text read line by line interleaves them."""
    ref_style: Literal["mixed", "utr", "cheque"] = "mixed"
    """mixed: alphanumeric and zero-padded refs (a str column); utr: 12 digits; cheque:
    six digits on cheque rows only."""

    @property
    def pdf_fields(self) -> tuple[Field, ...]:
        """The fields the PDF's table shows, left to right."""
        return tuple(c.field for c in self.columns)


def _c(field: Field, label: str, width: float, align: Align = "left") -> Column:
    return Column(field, label, width, align)


BANKS: tuple[BankSpec, ...] = (
    BankSpec(
        name="aldermoor",
        title="Aldermoor Bank",
        summary="ruled grid, header on every page, letterhead and account block, page footers, "
        "dated opening balance, descriptions wrapping inside cells, '05 Aug 2024' kept, "
        "thousands separators, names differ (Narration/Withdrawals/Deposits)",
        columns=(
            _c("date", "Date", 62),
            _c("description", "Narration", 205),
            _c("debit", "Withdrawals", 75, "right"),
            _c("credit", "Deposits", 75, "right"),
            _c("balance", "Balance", 85, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=60,
        ruled=True,
        wrap_lines=2,
        pdf_date="%d %b %Y",
        csv_date="%d %b %Y",
    ),
    BankSpec(
        name="brightwater",
        title="Brightwater Savings",
        summary="borderless with a shaded header band (extract_tables finds nothing useful), "
        "header on the first page only, '05/08/24' converted to 2024-08-05, one signed Amount "
        "column with '$' and (parentheses) for debits split into Debit/Credit",
        columns=(
            _c("date", "Date", 58),
            _c("description", "Description", 240),
            _c("amount", "Amount", 95, "right"),
            _c("balance", "Balance", 95, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=110,
        header_every_page=False,
        shaded_header=True,
        opening_row="undated",
        pdf_date="%d/%m/%y",
        csv_date="%Y-%m-%d",
        amount_style="signed",
        negative="parens",
        currency="$",
    ),
    BankSpec(
        name="corvid",
        title="Corvid Co-operative Bank",
        summary="borderless, header on every page, reference numbers that must stay strings "
        "(zero-padded and alphanumeric), descriptions wrapping onto three lines, one Amount "
        "column with a Dr/Cr column turned into a signed Amount",
        columns=(
            _c("date", "Txn Date", 58),
            _c("ref", "Ref No", 80),
            _c("description", "Description", 180),
            _c("amount", "Amount", 85, "right"),
            _c("marker", "Dr/Cr", 40, "center"),
            _c("balance", "Balance", 80, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Reference", "ref"),
            ("Description", "description"),
            ("Amount", "amount"),
            ("Balance", "balance"),
        ),
        rows=70,
        wrap_lines=3,
        amount_style="marker",
    ),
    BankSpec(
        name="dunmore",
        title="Dunmore Trust",
        summary="borderless, description before the date (column order differs from the CSV), "
        "amounts and balance with ' Dr'/' Cr' suffixes split into Withdrawal/Deposit, "
        "'05-Aug-2024' converted to 05/08/2024, undated carried/brought-forward rows",
        columns=(
            _c("description", "Particulars", 220),
            _c("date", "Txn Date", 66),
            _c("amount", "Amount", 100, "right"),
            _c("balance", "Balance", 105, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Narration", "description"),
            ("Withdrawal", "debit"),
            ("Deposit", "credit"),
            ("Balance", "balance"),
        ),
        rows=85,
        opening_row="none",
        carried_forward="undated",
        pdf_date="%d-%b-%Y",
        csv_date="%d/%m/%Y",
        amount_style="suffix",
        balance_suffix=True,
    ),
    BankSpec(
        name="eastgate",
        title="Eastgate Bank",
        summary="long statement (420 rows, 10+ pages), ruled grid, header on every page, a "
        "cheque-number column the CSV leaves out, dated brought-forward rows, undated "
        "carried-forward rows, a totals line and a dated closing balance",
        columns=(
            _c("date", "Date", 58),
            _c("ref", "Chq No", 48),
            _c("description", "Particulars", 190),
            _c("debit", "Debit", 72, "right"),
            _c("credit", "Credit", 72, "right"),
            _c("balance", "Balance", 80, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Particulars", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=420,
        ruled=True,
        opening_row="dated",
        closing_row="dated",
        carried_forward="dated",
        totals=True,
        ref_style="cheque",
    ),
    BankSpec(
        name="fernhill",
        title="Fernhill Credit Union",
        summary="borderless with a stacked two-line header, header on the first page only, "
        "running head on later pages, posting and value dates 'Aug 05, 2024' converted to "
        "unpadded 5/8/2024, '£' amounts in Money Out/Money In, wrapped descriptions",
        columns=(
            _c("date", "Posting\nDate", 66),
            _c("value_date", "Value\nDate", 66),
            _c("description", "Transaction\nDetails", 180),
            _c("debit", "Money\nOut", 68, "right"),
            _c("credit", "Money\nIn", 68, "right"),
            _c("balance", "Running\nBalance", 75, "right"),
        ),
        csv=(
            ("Posting Date", "date"),
            ("Value Date", "value_date"),
            ("Details", "description"),
            ("Money Out", "debit"),
            ("Money In", "credit"),
            ("Balance", "balance"),
        ),
        rows=90,
        header_every_page=False,
        wrap_lines=2,
        pdf_date="%b %d, %Y",
        csv_date="%-d/%-m/%Y",
        currency="£",
    ),
    BankSpec(
        name="glenrock",
        title="Glenrock Bank",
        summary="ruled grid with the header on the first page only, undated opening balance, "
        "dated closing balance, Debit/Credit combined into a signed Amount, CSV columns in "
        "another order (Balance first), '05.08.2024' kept, no thousands separators",
        columns=(
            _c("date", "Date", 60),
            _c("description", "Description", 210),
            _c("debit", "Debit", 75, "right"),
            _c("credit", "Credit", 75, "right"),
            _c("balance", "Balance", 85, "right"),
        ),
        csv=(
            ("Balance", "balance"),
            ("Amount", "amount"),
            ("Description", "description"),
            ("Date", "date"),
        ),
        rows=100,
        ruled=True,
        header_every_page=False,
        opening_row="undated",
        closing_row="dated",
        wrap_lines=2,
        pdf_date="%d.%m.%Y",
        csv_date="%d.%m.%Y",
        thousands=False,
    ),
    BankSpec(
        name="harbourline",
        title="Harbourline Bank",
        summary="borderless, the CSV keeps the dated opening and closing balance rows, "
        "'05 August 2024' converted to 05-08-2024, 'Rs. ' amounts, a 12-digit UTR column "
        "read as numbers",
        columns=(
            _c("date", "Date", 80),
            _c("description", "Description", 163),
            _c("ref", "UTR / Ref", 70),
            _c("debit", "Debit", 68, "right"),
            _c("credit", "Credit", 68, "right"),
            _c("balance", "Balance", 72, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("UTR", "ref"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=60,
        opening_row="dated",
        closing_row="dated",
        keeps_balance_rows=True,
        pdf_date="%d %B %Y",
        csv_date="%d-%m-%Y",
        currency="Rs. ",
        ref_style="utr",
    ),
    BankSpec(
        name="ironbridge",
        title="Ironbridge Savings",
        summary="long borderless statement (300 rows), Paid out/Paid in combined into a signed "
        "Amount, descriptions wrapping onto three lines, undated carried/brought-forward "
        "rows, totals after the table",
        columns=(
            _c("date", "Date", 60),
            _c("description", "Details", 225),
            _c("debit", "Paid out", 75, "right"),
            _c("credit", "Paid in", 75, "right"),
            _c("balance", "Balance", 85, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Details", "description"),
            ("Amount", "amount"),
            ("Balance", "balance"),
        ),
        rows=300,
        wrap_lines=3,
        carried_forward="undated",
        totals=True,
        pdf_date="%d/%m/%Y",
        csv_date="%d/%m/%Y",
    ),
    BankSpec(
        name="juniper",
        title="Juniper Savings Bank",
        summary="ruled grid, an Amount column with a Dr/Cr column split into separate columns "
        "for a CSV named in another language (Fecha, Concepto, Cargo, Abono, Saldo: mapped by "
        "content alone), '05/08/2024' converted to 2024-08-05, dated opening and closing rows",
        columns=(
            _c("date", "Date", 62),
            _c("description", "Transaction Details", 215),
            _c("amount", "Amount", 85, "right"),
            _c("marker", "Dr/Cr", 40, "center"),
            _c("balance", "Balance", 90, "right"),
        ),
        csv=(
            ("Fecha", "date"),
            ("Concepto", "description"),
            ("Cargo", "debit"),
            ("Abono", "credit"),
            ("Saldo", "balance"),
        ),
        rows=75,
        ruled=True,
        closing_row="dated",
        wrap_lines=2,
        pdf_date="%d/%m/%Y",
        csv_date="%Y-%m-%d",
        amount_style="marker",
    ),
    BankSpec(
        name="larkspur",
        title="Larkspur Bank",
        summary="borderless, two columns labelled 'Date' (booking and value date), decimal "
        "commas '1.234,56' with '€' and ' Cr'/' Dr' suffixes turned into a signed Amount, "
        "'05.08.24' converted to 05.08.2024, undated carried/brought-forward rows",
        columns=(
            _c("date", "Date", 52),
            _c("value_date", "Date", 52),
            _c("description", "Description", 200),
            _c("amount", "Amount", 100, "right"),
            _c("balance", "Balance", 100, "right"),
        ),
        csv=(
            ("Booking Date", "date"),
            ("Value Date", "value_date"),
            ("Text", "description"),
            ("Amount", "amount"),
            ("Balance", "balance"),
        ),
        rows=120,
        opening_row="none",
        carried_forward="undated",
        pdf_date="%d.%m.%y",
        csv_date="%d.%m.%Y",
        amount_style="suffix",
        decimal_comma=True,
        currency="€",
    ),
    BankSpec(
        name="marlow",
        title="Marlow Building Society",
        summary="two statement periods in one file (each with its letterhead, dated opening "
        "and closing rows, totals and its own page numbers), one signed Amount column with "
        "trailing minus signs ('1,234.56-') split into Debit/Credit, wrapped descriptions",
        columns=(
            _c("date", "Date", 60),
            _c("description", "Description", 230),
            _c("amount", "Amount", 95, "right"),
            _c("balance", "Balance", 95, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=90,
        periods=2,
        closing_row="dated",
        totals=True,
        wrap_lines=2,
        pdf_date="%d/%m/%Y",
        csv_date="%d/%m/%Y",
        amount_style="signed",
        negative="trailing",
    ),
    BankSpec(
        name="northcliff",
        title="Northcliff Gramin Bank",
        summary="landscape pages with a seven-column table, Indian digit grouping "
        "('1,23,456.78') on amounts in lakhs, a cheque column the CSV leaves out, balances "
        "with an unspaced 'CR'/'DR' suffix, '05-08-24' converted to 05-08-2024",
        columns=(
            _c("date", "Txn Date", 62),
            _c("value_date", "Value Date", 62),
            _c("ref", "Chq No", 70),
            _c("description", "Narration", 260),
            _c("debit", "Withdrawals", 95, "right"),
            _c("credit", "Deposits", 95, "right"),
            _c("balance", "Balance", 110, "right"),
        ),
        csv=(
            ("Txn Date", "date"),
            ("Value Date", "value_date"),
            ("Narration", "description"),
            ("Withdrawal", "debit"),
            ("Deposit", "credit"),
            ("Balance", "balance"),
        ),
        rows=80,
        landscape=True,
        grouping="indian",
        amount_scale=10,
        balance_suffix=True,
        suffixes=("DR", "CR"),
        wrap_lines=2,
        pdf_date="%d-%m-%y",
        csv_date="%d-%m-%Y",
        ref_style="cheque",
    ),
    BankSpec(
        name="oakhaven",
        title="Oakhaven Sparkasse",
        summary="decimal commas with a space for thousands ('1 234,56'), one Amount column "
        "with unspaced 'DR'/'CR' suffixes turned into a signed Amount, header on the first "
        "page only, no page footers or running head, undated opening and closing rows, "
        "'05.08.2024' converted to 2024-08-05",
        columns=(
            _c("date", "Date", 62),
            _c("description", "Description", 230),
            _c("amount", "Amount", 100, "right"),
            _c("balance", "Balance", 100, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Amount", "amount"),
            ("Balance", "balance"),
        ),
        rows=70,
        header_every_page=False,
        running_head=False,
        footer=False,
        opening_row="undated",
        closing_row="undated",
        pdf_date="%d.%m.%Y",
        csv_date="%Y-%m-%d",
        amount_style="suffix",
        suffixes=("DR", "CR"),
        decimal_comma=True,
        thousands_space=True,
    ),
    BankSpec(
        name="pemberton",
        title="Pemberton Trust Bank",
        summary="a currency without minor units: whole-yen amounts and balances ('¥1,234,567', "
        "no decimals), split Withdrawal/Deposit columns, '2024/08/05' converted to 2024-08-05, "
        "header on every page, dated opening balance",
        columns=(
            _c("date", "Date", 66),
            _c("description", "Description", 205),
            _c("debit", "Withdrawal", 80, "right"),
            _c("credit", "Deposit", 80, "right"),
            _c("balance", "Balance", 90, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Withdrawal", "debit"),
            ("Deposit", "credit"),
            ("Balance", "balance"),
        ),
        rows=60,
        pdf_date="%Y/%m/%d",
        csv_date="%Y-%m-%d",
        currency="¥",
        amount_scale=100,
        decimals=0,
    ),
    BankSpec(
        name="quillon",
        title="Quillon Cooperative Bank",
        summary="issue 35: columns ruled by vertical lines only, blank Debit/Credit cells (ragged "
        "as text), the opening balance in the account block above the table (no opening row), "
        "computer-generated footer and 'Page n of N'",
        columns=(
            _c("date", "Date", 60),
            _c("description", "Transaction Details", 215),
            _c("debit", "Debit", 75, "right"),
            _c("credit", "Credit", 75, "right"),
            _c("balance", "Balance", 90, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=70,
        column_rules=True,
        opening_in_header=True,
        opening_row="none",
        pdf_date="%d/%m/%Y",
        csv_date="%d/%m/%Y",
    ),
    BankSpec(
        name="tamsin",
        title="Tamsin Savings Bank",
        summary="issue 35: two tables side by side on a landscape page (rows down the left, then "
        "the right; text read line by line interleaves them), amounts and balances with ' DR'/"
        "' CR' suffixes, the balance going overdrawn (DR)",
        columns=(
            _c("date", "Date", 52),
            _c("description", "Details", 140),
            _c("amount", "Amount", 72, "right"),
            _c("balance", "Balance", 80, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Debit", "debit"),
            ("Credit", "credit"),
            ("Balance", "balance"),
        ),
        rows=60,
        landscape=True,
        panels=2,
        opening_row="none",
        amount_style="suffix",
        balance_suffix=True,
        suffixes=(" DR", " CR"),
        overdrawn=True,
        pdf_date="%d/%m/%y",
        csv_date="%d/%m/%Y",
    ),
)

#: Layouts outside what the offline coder can express: the tests use them to show that such a
#: run ends as failed with a diff report, never with a crash. Not part of ``make eval``.
OUTSIDE: tuple[BankSpec, ...] = (
    BankSpec(
        name="kestrel",
        title="Kestrel Mutual",
        summary="no table at all: each transaction is a block of 'label: value' lines",
        columns=(
            _c("date", "Date", 100),
            _c("description", "Description", 200),
            _c("amount", "Amount", 100, "right"),
            _c("balance", "Balance", 100, "right"),
        ),
        csv=(
            ("Date", "date"),
            ("Description", "description"),
            ("Amount", "amount"),
            ("Balance", "balance"),
        ),
        rows=30,
        layout="cards",
        opening_row="none",
        amount_style="signed",
        pdf_date="%d %b %Y",
        csv_date="%d %b %Y",
    ),
)


def bank(name: str) -> BankSpec:
    """The spec named ``name`` (corpus or outside)."""
    for spec in BANKS + OUTSIDE:
        if spec.name == name:
            return spec
    raise KeyError(name)
