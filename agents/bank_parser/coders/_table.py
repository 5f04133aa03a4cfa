"""Finding the transactions table in the analysed pages: its header and the rows under it.

Two ways to see a table. *Ruled*: pdfplumber's ``extract_tables`` found a grid and one of
its first rows reads like the header. *Words*: a line (or two stacked lines) of positioned
words reads like the header and is followed by a line with data. "Reads like the header"
means: no label is a number or a date, and at least two labels resemble the expected CSV's
column names (without a CSV, any such line will do).

A third way, for a scan whose table has neither ruling lines nor a header (issue 24): the
columns are where the *date-led lines* (a line starting with a date) leave a vertical gap,
and each column is named by its values: dates, text, amounts, and the balance (the amount
column whose changes the other amounts explain).

Once the header is known, the rows come from the parser's own extraction functions
(:mod:`~agents.bank_parser.coders._runtime`), so the coder studies exactly the cells the
parser will see.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Literal

from agents.bank_parser.analysis import ExpectedSchema
from agents.bank_parser.coders._mapping import concepts, name_similarity
from agents.bank_parser.coders._runtime import (
    RawRow,
    Word,
    group_lines,
    header_groups,
    page_table_rows,
    page_word_rows,
    panel_cut,
    split_line,
    squash,
    tidy,
)
from agents.bank_parser.coders._values import is_date, is_numberish, parse_number
from agents.bank_parser.pages import PageAnalysis

LINE_TOLERANCE = 3.0
#: Concepts of header labels any bank statement's table uses (after synonyms).
BANKING_WORDS = frozenset(
    {
        "date",
        "description",
        "debit",
        "credit",
        "balance",
        "amount",
        "reference",
        "cheque",
        "transaction",
        "posting",
        "value",
        "paid",
        "money",
    }
)
#: A text-only line this close under a data line (in line pitches) is a wrapped description.
CONTINUATION_PITCHES = 1.6


@dataclass
class Layout:
    """A table found in the analysed pages: header labels and the raw rows under it."""

    source: Literal["tables", "words"]
    labels: list[str]
    header_lines: int = 1
    rows: list[RawRow] = field(default_factory=list)
    line_pitch: float = 0.0
    continuations: int = 0
    cuts: list[float] | None = None
    """Column boundaries found by alignment when the table has no header (issue 24)."""

    def column(self, index: int) -> list[str]:
        """The cells of column ``index``, top to bottom."""
        return [cells[index] for cells, _ in self.rows]


def page_words(page: PageAnalysis) -> list[Word]:
    """The page's words as the parser sees them (pdfplumber's dict form)."""
    return [
        {"text": w.text, "x0": w.x0, "x1": w.x1, "top": w.top, "bottom": w.bottom}
        for w in page.words
    ]


def header_score(labels: Sequence[str], expected: ExpectedSchema | None) -> float:
    """How much a row of labels looks like the table header (higher is better, 0: not).

    Labels resembling the expected CSV's column names count most; failing that (a CSV
    named in another language, say), labels in the generic banking vocabulary ("Date",
    "Withdrawals", "Balance"...) make a weaker header, and the columns map by content.
    Without a CSV any row of labels may be the header (0.5), and the banking vocabulary
    ranks them: an account block's "Customer ID: … | Currency: …" above an "Opening
    balance: …" line is a row of labels followed by data too (issue 35).
    """
    if len(labels) < 2 or any(not squash(x) or _holds_data(x) for x in labels):
        return 0.0
    vocabulary = sum(1 for x in labels if concepts(x) & BANKING_WORDS)
    by_vocabulary = 0.5 * vocabulary / len(labels) if vocabulary >= 2 else 0.0
    if expected is None:
        return 0.5 + by_vocabulary
    best = [max(name_similarity(col, x) for x in labels) for col in expected.columns]
    hits = sum(1 for b in best if b >= 0.6)
    by_name = hits / len(expected.columns) if hits >= min(2, len(expected.columns)) else 0.0
    return max(by_name, by_vocabulary)


def _holds_data(label: str) -> bool:
    """Whether a would-be label is, or contains, an amount or a date ("Amount: -7,901.85")."""
    return is_numberish(label) or any(
        re.search(r"\d", word) and is_numberish(word) for word in label.split()
    )


# --- ruled tables -----------------------------------------------------------------------


def table_layout(pages: Sequence[PageAnalysis], expected: ExpectedSchema | None) -> Layout | None:
    """The ruled tables' header (best match among each table's first rows) and their rows."""
    labels = _table_header(pages, expected)
    if labels is None:
        return None
    config = SimpleNamespace(header_labels=labels)
    state: dict[str, Any] = {}
    rows = [row for page in pages for row in page_table_rows(page.tables, state, config)]
    return Layout("tables", labels, 1, rows)


def _table_header(
    pages: Sequence[PageAnalysis], expected: ExpectedSchema | None
) -> list[str] | None:
    best: tuple[float, list[str]] | None = None
    for table in (t for page in pages for t in page.tables):
        for row in table[:3]:
            labels = [tidy(cell) for cell in row if tidy(cell)]
            score = header_score(labels, expected)
            if score > 0 and (best is None or score > best[0]):
                best = (score, labels)
    return None if best is None else best[1]


# --- positioned words -------------------------------------------------------------------


def word_layout(pages: Sequence[PageAnalysis], expected: ExpectedSchema | None) -> Layout | None:
    """The header found among the positioned words, and every line under it as cells."""
    for page in pages:
        words = page_words(page)
        cut = panel_cut(words, LINE_TOLERANCE)  # two tables side by side: the left one's header
        found = find_word_header(group_lines([w for w in words if cut is None or w["x0"] < cut], LINE_TOLERANCE),
                                 expected)
        if found is not None:
            labels, count = found
            return words_under(pages, labels, count)
    return None


def words_under(pages: Sequence[PageAnalysis], labels: list[str], header_lines: int) -> Layout:
    """The rows the parser would read under ``labels``, with line pitch and wrapped lines."""
    config = SimpleNamespace(
        header_labels=labels,
        header_lines=header_lines,
        line_tolerance=LINE_TOLERANCE,
        boundary_rule="valley",
    )
    state: dict[str, Any] = {}
    rows = [row for page in pages for row in page_word_rows(page_words(page), state, config)]
    gaps = [gap for _, gap in rows if 0 < gap < float("inf")]
    pitch = statistics.median(gaps) if gaps else 0.0
    return Layout("words", labels, header_lines, rows, pitch, _continuations(rows, pitch))


def find_word_header(
    lines: Sequence[list[Word]], expected: ExpectedSchema | None
) -> tuple[list[str], int] | None:
    """The best header among ``lines``: (labels, lines it takes), or None.

    A header is one line, or two when the second sits close under the first and holds no
    data (stacked labels such as "Money" over "Out"); a line with data must follow it.
    """
    best: tuple[float, list[str], int] | None = None
    for i in range(len(lines)):
        for count in (1, 2):
            if i + count >= len(lines) or not _has_data(lines[i + count]):
                continue
            if count == 2 and not _stacked(lines[i], lines[i + 1]):
                continue
            labels = [
                " ".join(w["text"] for w in g) for g in header_groups(list(lines[i : i + count]))
            ]
            score = header_score(labels, expected)
            if score > 0 and (best is None or score > best[0]):
                best = (score, labels, count)
        if best is not None and expected is None and best[0] >= 1.0:
            break  # every label is a banking word: no later line can do better
    return None if best is None else (best[1], best[2])


def _stacked(upper: list[Word], lower: list[Word]) -> bool:
    """Whether ``lower`` can be the second line of a header printed on two lines."""
    height = max(w["bottom"] - w["top"] for w in upper)
    return not _has_data(lower) and lower[0]["top"] - upper[0]["top"] <= 2.0 * height


def _has_data(line: Sequence[Word]) -> bool:
    """Whether a line holds an amount or a date, i.e. is not just labels or prose."""
    return any(is_numberish(w["text"]) for w in line)


def _continuations(rows: Sequence[RawRow], pitch: float) -> int:
    """Lines without amounts or dates right under a line with some: wrapped text."""
    count = 0
    for (above, _), (line, gap) in itertools.pairwise(rows):
        if (
            gap <= CONTINUATION_PITCHES * pitch
            and _cells_have_data(above)
            and not _cells_have_data(line)
        ):
            count += 1
    return count


def _cells_have_data(cells: Sequence[str]) -> bool:
    return any(is_numberish(word) for cell in cells for word in cell.split())


# --- alignment alone (no header, no rules) ----------------------------------------------

#: Share of date-led lines a gap may be crossed by and still separate two columns.
GAP_CROSSINGS = 0.1


def aligned_layout(pages: Sequence[PageAnalysis], expected: ExpectedSchema | None) -> Layout | None:
    """The table seen from its dated lines alone: column cuts where they leave a vertical gap,
    labels typed from the values (None: fewer than three dated lines, or one column)."""
    led = [line for page in pages for line in group_lines(page_words(page), LINE_TOLERANCE)
           if _date_led(line)]
    if len(led) < 3:
        return None
    cuts = alignment_cuts(led)
    if not cuts:
        return None
    cells = [split_line(line, cuts) for line in led]
    labels = typed_labels(cells)
    config = SimpleNamespace(header_labels=labels, header_lines=0, line_tolerance=LINE_TOLERANCE,
                             boundary_rule="valley", fixed_cuts=cuts)
    state: dict[str, Any] = {}
    rows = [row for page in pages for row in page_word_rows(page_words(page), state, config)]
    gaps = [gap for _, gap in rows if 0 < gap < float("inf")]
    pitch = statistics.median(gaps) if gaps else 0.0
    return Layout("words", labels, 0, rows, pitch, _continuations(rows, pitch), cuts)


def _date_led(line: Sequence[Word]) -> bool:
    """Whether the line holds a date (one to three words: "05/08/24", "05 Aug 2024"): at its
    start as a rule, after the description in some layouts."""
    texts = [w["text"] for w in line]
    return any(is_date(" ".join(texts[i : i + n])) for i in range(len(texts)) for n in (1, 2, 3)
               if i + n <= len(texts))


def alignment_cuts(lines: Sequence[Sequence[Word]]) -> list[float]:
    """X positions between columns: the middle of each run, wider than most word gaps, that
    at most :data:`GAP_CROSSINGS` of the lines cross with a word."""
    words = [w for line in lines for w in line]
    left, right = int(min(w["x0"] for w in words)), int(max(w["x1"] for w in words)) + 1
    crossed = [0] * (right - left)
    for line in lines:
        for word in line:
            for x in range(int(word["x0"]) - left, min(int(word["x1"]) + 1 - left, len(crossed))):
                crossed[x] += 1
    heights = sorted(w["bottom"] - w["top"] for w in words)
    wide = 0.8 * heights[len(heights) // 2]
    limit = GAP_CROSSINGS * len(lines)
    cuts, run = [], []
    for x, count in enumerate(crossed):
        if count <= limit:
            run.append(x)
            continue
        if run and run[0] > 0 and len(run) >= wide:
            cuts.append(left + (run[0] + run[-1]) / 2)
        run = []
    return cuts


def typed_labels(rows: Sequence[Sequence[str]]) -> list[str]:
    """A label for each column from its values: Date, Description (the longest text), Text,
    Balance (the amount column whose changes another amount column explains) and Amount."""
    width = len(rows[0])
    columns = [[row[i] for row in rows if row[i]] for i in range(width)]
    kinds = []
    for cells in columns:
        if cells and sum(1 for c in cells if is_date(c)) >= 0.8 * len(cells):
            kinds.append("date")
        elif cells and sum(1 for c in cells if parse_number(c) is not None) >= 0.6 * len(cells):
            kinds.append("number")
        else:
            kinds.append("text")
    numbers = [i for i, k in enumerate(kinds) if k == "number"]
    balance = _balance_column(rows, numbers)
    texts = [i for i, k in enumerate(kinds) if k == "text" and columns[i]]
    description = max(texts, key=lambda i: sum(len(c) for c in columns[i]), default=None)
    labels = []
    for i, kind in enumerate(kinds):
        if kind == "date":
            labels.append("Date" if "Date" not in labels else f"Date {i + 1}")
        elif kind == "number":
            labels.append("Balance" if i == balance else f"Amount {i + 1}")
        else:
            labels.append("Description" if i == description else f"Text {i + 1}")
    return labels


def _balance_column(rows: Sequence[Sequence[str]], numbers: Sequence[int]) -> int | None:
    """The number column whose row-to-row change another number column's value explains most
    often (the last number column when none does)."""
    best: tuple[int, int] | None = None
    for b in numbers:
        hits = 0
        for above, row in itertools.pairwise(rows):
            start, end = parse_number(above[b]), parse_number(row[b])
            if start is None or end is None:
                continue
            others = [parse_number(row[a]) for a in numbers if a != b]
            hits += any(v is not None and abs(abs(v) - abs(end - start)) < 0.005 for v in others)
        if best is None or hits > best[0]:
            best = (hits, b)
    if best is not None and best[0] > 0:
        return best[1]
    return numbers[-1] if numbers else None
