"""Draw a statement as a PDF with reportlab: a real text layer, laid out as the spec says.

The page is A4, in portrait unless the spec says landscape. Page 1 carries the letterhead (bank, address, account block,
statement period); later pages a one-line running head. The table is either ruled (a full
grid pdfplumber's ``extract_tables`` finds) or borderless (text only, columns shown by
alignment). Descriptions wrap inside their column; amounts are right-aligned. Page footers
say "Page X of Y". Output is byte-for-byte deterministic (``invariant=1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reportlab.lib.pagesizes import A4, landscape
from reportlab.pdfgen.canvas import Canvas

from tests.corpus.ledger import Statement, Transaction, split_periods
from tests.corpus.specs import BankSpec, Column, Field
from tests.corpus.textfit import BOLD, FONT, PADDING, SIZE, description_width, wrap

MARGIN = 36.0
BOTTOM = 72.0
LEADING = 10.0
ROW_GAP = 3.5
HEADER_LEADING = 9.5
LETTERHEAD_HEIGHT = 118.0
RUNNING_HEAD_HEIGHT = 22.0
PANEL_GAP = 24.0  # between two tables side by side (``spec.panels``)

Kind = Literal["txn", "opening", "closing", "carried", "brought", "total"]
#: Cells printed without their decimal point: (transaction index, field).
Faint = Literal["faint", "fainter"]
Faded = frozenset[tuple[int, Field | Faint]]
#: The grey a faint row is printed in (``(row, "faint")`` in ``Faded``: a row the scanner barely
#: caught; issue 46): at 0.55 Tesseract misreads its date, at 0.7 it does not see the row at all.
FAINT_GREYS: dict[str, float] = {"faint": 0.55, "fainter": 0.7}


@dataclass(frozen=True)
class Item:
    """One table row as printed: single-line cells by field, and the description's lines."""

    kind: Kind
    cells: dict[Field, str] = field(default_factory=dict)
    description: tuple[str, ...] = ("",)
    index: int | None = None
    """The transaction's position in the statement (None for other rows)."""
    grey: float = 0.0
    """The grey the row is printed in: 0 black, else one of :data:`FAINT_GREYS` (issue 46)."""

    @property
    def lines(self) -> int:
        """Text lines the row takes."""
        return max(1, len(self.description))


def format_date(day: object, fmt: str) -> str:
    """``strftime`` with ``%-d``/``%-m`` (no zero padding) done here, so it works anywhere."""
    text = fmt.replace("%-d", str(day.day))  # type: ignore[attr-defined]
    text = text.replace("%-m", str(day.month))  # type: ignore[attr-defined]
    return day.strftime(text)  # type: ignore[attr-defined]


def money(cents: int, spec: BankSpec, *, negative: bool = False) -> str:
    """An amount as the statement prints it: separators, currency, sign style."""
    units, hundredths = divmod(abs(cents), 100)
    body = f"{grouped(units, spec)}.{hundredths:02d}" if spec.decimals else grouped(units, spec)
    if spec.decimal_comma:
        thousands = " " if spec.thousands_space else "."
        body = body.replace(",", " ").replace(".", ",").replace(" ", thousands)
    text = f"{spec.currency}{body}"
    if not negative:
        return text
    return {"parens": f"({text})", "trailing": f"{text}-"}.get(spec.negative, f"-{text}")


def grouped(units: int, spec: BankSpec) -> str:
    """Whole units with the spec's thousands grouping: 1,234,567 or Indian 12,34,567."""
    if not spec.thousands:
        return str(units)
    if spec.grouping == "western" or units < 1000:
        return f"{units:,}"
    head, tail = str(units)[:-3], str(units)[-3:]
    pairs = [head[max(0, i - 2) : i] for i in range(len(head), 0, -2)]
    return ",".join(reversed(pairs)) + "," + tail


def balance_text(cents: int, spec: BankSpec) -> str:
    """The running balance, with a " Cr"/" Dr" suffix where the spec says so."""
    if spec.balance_suffix:
        return money(cents, spec) + spec.suffixes[0 if cents < 0 else 1]
    return money(cents, spec, negative=cents < 0)


def amount_cells(cents: int, spec: BankSpec) -> dict[Field, str]:
    """The amount columns of one transaction, in the spec's amount style."""
    debit = cents < 0
    if spec.amount_style == "split":
        return {"debit" if debit else "credit": money(cents, spec)}
    if spec.amount_style == "signed":
        return {"amount": money(cents, spec, negative=debit)}
    if spec.amount_style == "marker":
        return {"amount": money(cents, spec), "marker": "Dr" if debit else "Cr"}
    return {"amount": money(cents, spec) + spec.suffixes[0 if debit else 1]}


def transaction_item(index: int, txn: Transaction, spec: BankSpec, faded: Faded = frozenset()) -> Item:
    """The row of transaction ``index``; a cell named in ``faded`` is printed without its
    decimal point (a scan whose dot did not come out: issue 24's repair cases)."""
    cells: dict[Field, str] = {
        "date": format_date(txn.date, spec.pdf_date),
        "value_date": format_date(txn.value_date, spec.pdf_date),
        "ref": txn.ref,
        "balance": balance_text(txn.balance, spec),
        **amount_cells(txn.cents, spec),
    }
    point = "," if spec.decimal_comma else "."
    for (row, name) in faded:
        text = cells.get(name) if name not in FAINT_GREYS else None
        if row == index and text and point in text:
            cut = text.rindex(point)
            cells[name] = text[:cut] + text[cut + 1 :]
    return Item("txn", cells, tuple(wrap(txn.description, description_width(spec))), index,
                grey=next((FAINT_GREYS[name] for row, name in faded if row == index and name in FAINT_GREYS), 0.0))


def balance_item(kind: Kind, label: str, day: object | None, cents: int, spec: BankSpec) -> Item:
    """An opening/closing/carried/brought-forward row: a label and a balance, maybe a date."""
    cells: dict[Field, str] = {"balance": balance_text(cents, spec)}
    if day is not None:
        cells["date"] = format_date(day, spec.pdf_date)
    return Item(kind, cells, (label,))


def total_items(statement: Statement, spec: BankSpec) -> list[Item]:
    """The summary after the table: total debits and credits (not transactions)."""
    debits = -sum(t.cents for t in statement.transactions if t.cents < 0)
    credits = sum(t.cents for t in statement.transactions if t.cents > 0)
    if spec.amount_style == "split":
        cells: dict[Field, str] = {"debit": money(debits, spec), "credit": money(credits, spec)}
        return [Item("total", cells, ("Total",))]
    return [
        Item("total", {"amount": money(debits, spec)}, ("Total debits",)),
        Item("total", {"amount": money(credits, spec)}, ("Total credits",)),
    ]


def table_items(statement: Statement, spec: BankSpec, faded: Faded = frozenset()) -> list[Item]:
    """Every row of the table in order, before pagination adds carried/brought-forward rows."""
    items = []
    if spec.opening_row != "none":
        day = statement.start if spec.opening_row == "dated" else None
        items.append(
            balance_item("opening", "Opening Balance", day, statement.opening_balance, spec)
        )
    items += [transaction_item(i, t, spec, faded) for i, t in enumerate(statement.transactions)]
    if spec.closing_row != "none":
        day = statement.end if spec.closing_row == "dated" else None
        items.append(
            balance_item("closing", "Closing Balance", day, statement.closing_balance, spec)
        )
    if spec.totals:
        items += total_items(statement, spec)
    return items


# --- pagination -------------------------------------------------------------------------


def page_size(spec: BankSpec) -> tuple[float, float]:
    """A4, portrait or (``spec.landscape``) on its side."""
    return landscape(A4) if spec.landscape else A4


def top_of(spec: BankSpec) -> float:
    """The y of the top margin."""
    return page_size(spec)[1] - 40.0


def header_lines(spec: BankSpec) -> int:
    """Lines the table header takes (2 for stacked labels)."""
    return max(len(c.label.split("\n")) for c in spec.columns)


def header_height(spec: BankSpec) -> float:
    """Height of the table header block."""
    if spec.ruled:
        return header_lines(spec) * LEADING + 5
    return header_lines(spec) * HEADER_LEADING + 6


def row_height(item: Item, spec: BankSpec) -> float:
    """Height one row takes."""
    return item.lines * LEADING + (5 if spec.ruled else ROW_GAP)


def body_top(page: int, spec: BankSpec) -> float:
    """Where the first row of page ``page`` (0-based) starts."""
    y = top_of(spec) - (
        LETTERHEAD_HEIGHT if page == 0 else (RUNNING_HEAD_HEIGHT if spec.running_head else 0)
    )
    if page == 0 or spec.header_every_page:
        y -= header_height(spec)
    return y


def paginate(items: list[Item], statement: Statement, spec: BankSpec) -> list[list[Item]]:
    """Split the rows into pages, adding carried/brought-forward rows at the breaks."""
    pages: list[list[Item]] = [[]]
    y = body_top(0, spec)
    balance = statement.opening_balance
    reserve = LEADING + (5 if spec.ruled else ROW_GAP) if spec.carried_forward != "none" else 0
    last_day = statement.start
    for item in items:
        if y - row_height(item, spec) - reserve < BOTTOM:
            if spec.carried_forward != "none":
                pages[-1].append(
                    balance_item("carried", "Balance carried forward", None, balance, spec)
                )
            pages.append([])
            y = body_top((len(pages) - 1) // spec.panels, spec)
            if spec.carried_forward != "none":
                day = last_day if spec.carried_forward == "dated" else None
                brought = balance_item("brought", "Balance brought forward", day, balance, spec)
                pages[-1].append(brought)
                y -= row_height(brought, spec)
        pages[-1].append(item)
        y -= row_height(item, spec)
        if item.index is not None:
            balance = statement.transactions[item.index].balance
            last_day = statement.transactions[item.index].date
    return pages


# --- drawing ----------------------------------------------------------------------------


def column_x(spec: BankSpec, left: float = MARGIN) -> list[float]:
    """Left edge of each column, and the table's right edge last, for a table from ``left``."""
    xs = [left]
    for column in spec.columns:
        xs.append(xs[-1] + column.width)
    return xs


def draw_text(
    canvas: Canvas, column: Column, x0: float, y: float, text: str, font: str = FONT
) -> None:
    """Draw ``text`` in a column at baseline ``y``, aligned as the column says."""
    canvas.setFont(font, SIZE)
    if column.align == "right":
        canvas.drawRightString(x0 + column.width - PADDING, y, text)
    elif column.align == "center":
        canvas.drawCentredString(x0 + column.width / 2, y, text)
    else:
        canvas.drawString(x0 + PADDING, y, text)


def draw_letterhead(canvas: Canvas, statement: Statement, spec: BankSpec) -> None:
    """Bank name, address, account block and statement period at the top of page 1."""
    y = top_of(spec) - 14
    canvas.setFont(BOLD, 16)
    canvas.drawString(MARGIN, y, spec.title)
    canvas.setFont(FONT, 8)
    canvas.drawString(MARGIN, y - 14, "12 Harbour Street, Riverside - customer care 1800 200 300")
    canvas.setFont(BOLD, 11)
    canvas.drawString(MARGIN, y - 36, "Statement of Account")
    canvas.setFont(FONT, 8)
    period = (
        f"{format_date(statement.start, '%d %b %Y')} to {format_date(statement.end, '%d %b %Y')}"
    )
    rows = (
        ("Account holder:", statement.account_holder, "Account number:", statement.account_number),
        ("Branch:", "Riverside Main", "Statement period:", period),
        ("Customer ID:", "C-48213", "Currency:", "Local"),
    )
    if spec.opening_in_header:
        rows += (("Opening balance:", balance_text(statement.opening_balance, spec), "", ""),)
    for i, (k1, v1, k2, v2) in enumerate(rows):
        line = y - 54 - i * 12
        canvas.drawString(MARGIN, line, f"{k1} {v1}")
        canvas.drawString(MARGIN + 280, line, f"{k2} {v2}")


def draw_header(canvas: Canvas, top: float, spec: BankSpec, left: float = MARGIN) -> float:
    """The table's header at ``top`` (the table from ``left``); returns the y under it."""
    height = header_height(spec)
    xs = column_x(spec, left)
    if spec.shaded_header:
        canvas.setFillGray(0.85)
        canvas.rect(left, top - height, xs[-1] - left, height, stroke=0, fill=1)
        canvas.setFillGray(0)
    step = LEADING if spec.ruled else HEADER_LEADING
    for column, x0 in zip(spec.columns, xs, strict=False):
        for k, part in enumerate(column.label.split("\n")):
            draw_text(canvas, column, x0, top - 9 - k * step, part, BOLD)
    if spec.ruled:
        canvas.line(left, top, xs[-1], top)
        canvas.line(left, top - height, xs[-1], top - height)
    return top - height


def draw_row(canvas: Canvas, item: Item, top: float, spec: BankSpec, left: float = MARGIN) -> float:
    """One row at ``top`` (the table from ``left``); returns the y under it."""
    xs = column_x(spec, left)
    baseline = top - 9
    canvas.setFillGray(item.grey)
    for column, x0 in zip(spec.columns, xs, strict=False):
        if column.field == "description":
            for k, line in enumerate(item.description):
                draw_text(canvas, column, x0, baseline - k * LEADING, line)
        elif item.cells.get(column.field):
            draw_text(canvas, column, x0, baseline, str(item.cells[column.field]))
    canvas.setFillGray(0.0)
    bottom = top - row_height(item, spec)
    if spec.ruled:
        canvas.line(left, bottom, xs[-1], bottom)
    return bottom


def draw_footer(canvas: Canvas, page: int, pages: int, spec: BankSpec) -> None:
    """Disclaimer and "Page X of Y" at the foot of the page."""
    canvas.setFont(FONT, 7)
    canvas.drawString(
        MARGIN,
        48,
        "This is a computer-generated statement; please report any discrepancy within 30 days.",
    )
    canvas.drawCentredString(page_size(spec)[0] / 2, 34, f"Page {page} of {pages}")


def draw_page(
    canvas: Canvas, number: int, panels: list[list[Item]], total: int, statement: Statement, spec: BankSpec
) -> None:
    """One page: letterhead or running head, then each panel's table side by side (one
    panel unless ``spec.panels``), each with its header (if printed here), rows and rules;
    the footer."""
    top = top_of(spec)
    if number == 0:
        draw_letterhead(canvas, statement, spec)
        y = top - LETTERHEAD_HEIGHT
    elif spec.running_head:
        canvas.setFont(FONT, 8)
        canvas.drawString(
            MARGIN,
            top - 10,
            f"{spec.title} - account {statement.account_number} - statement continued",
        )
        y = top - RUNNING_HEAD_HEIGHT
    else:
        y = top
    width = column_x(spec)[-1] - MARGIN + PANEL_GAP
    for k, items in enumerate(panels):
        draw_panel(canvas, number, items, y, spec, MARGIN + k * width)
    if spec.footer:
        draw_footer(canvas, number + 1, total, spec)


def draw_panel(canvas: Canvas, number: int, items: list[Item], table_top: float, spec: BankSpec, left: float) -> None:
    """One table from ``left``, ``table_top`` down: header (if printed here), rows, rules."""
    y = table_top
    if spec.header and (number == 0 or spec.header_every_page):
        y = draw_header(canvas, y, spec, left)
    elif spec.ruled:
        canvas.line(left, y, column_x(spec, left)[-1], y)
    for item in items:
        y = draw_row(canvas, item, y, spec, left)
    if spec.ruled or spec.column_rules:
        for x in column_x(spec, left):
            canvas.line(x, table_top, x, y)


def draw_cards(canvas: Canvas, statement: Statement, spec: BankSpec) -> None:
    """The no-table layout: a block of labelled lines per transaction."""
    pages = [
        list(statement.transactions[i : i + 14]) for i in range(0, len(statement.transactions), 14)
    ]
    for number, txns in enumerate(pages):
        if number == 0:
            draw_letterhead(canvas, statement, spec)
        y = top_of(spec) - (LETTERHEAD_HEIGHT if number == 0 else 0)
        for txn in txns:
            canvas.setFont(BOLD, 8)
            canvas.drawString(MARGIN, y, f"Transaction on {format_date(txn.date, spec.pdf_date)}")
            canvas.setFont(FONT, 8)
            canvas.drawString(MARGIN + 12, y - 11, txn.description)
            canvas.drawString(
                MARGIN + 12,
                y - 22,
                f"Amount: {money(txn.cents, spec, negative=txn.cents < 0)}"
                f"    Balance after: {money(txn.balance, spec)}",
            )
            y -= 40
        draw_footer(canvas, number + 1, len(pages), spec)
        canvas.showPage()


def render_pdf(path: Path, statement: Statement, spec: BankSpec, faded: Faded = frozenset()) -> int:
    """Write the statement's PDF to ``path``; returns the number of pages. ``faded``: cells
    printed without their decimal point (see :func:`transaction_item`; with several
    periods, a transaction's index counts from the start of its period)."""
    canvas = Canvas(str(path), pagesize=page_size(spec), invariant=1)
    canvas.setTitle(f"{spec.title} statement")
    canvas.setAuthor(spec.title)
    canvas.setCreator("sandloop synthetic corpus")
    if spec.layout == "cards":
        draw_cards(canvas, statement, spec)
        canvas.save()
        return -(-len(statement.transactions) // 14)
    parts = split_periods(statement, spec.periods) if spec.periods > 1 else [statement]
    count = sum(_render_period(canvas, part, spec, faded) for part in parts)
    canvas.save()
    return count


def _render_period(canvas: Canvas, statement: Statement, spec: BankSpec, faded: Faded) -> int:
    """One statement period's pages, numbered on their own; returns how many."""
    chunks = paginate(table_items(statement, spec, faded), statement, spec)
    pages = [chunks[i : i + spec.panels] for i in range(0, len(chunks), spec.panels)]
    for number, panels in enumerate(pages):
        draw_page(canvas, number, panels, len(pages), statement, spec)
        canvas.showPage()
    return len(pages)
