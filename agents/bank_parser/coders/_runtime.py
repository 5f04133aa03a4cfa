"""The functions every parser the offline coder writes carries, kept here as real code.

The template copies the source of these functions (``inspect.getsource``) into each
generated parser, below a configuration block (``CONFIG``, a ``SimpleNamespace`` of literals
derived from the analysis). The host imports this module too, to *preview* a plan on the
analysed pages (what rows would the parser produce?) before any sandbox runs: the preview
and the parser share one implementation, so they cannot drift apart. This is project code,
not generated code; no generated code ever runs on the host.

Rules for this module, checked by the unit tests: standard library, pandas and pdfplumber
only; no module-level state the functions rely on (each function is copied alone); every
setting comes in through ``config``. Rows are lists of cell texts in header order.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import pandas as pd

Word = dict[str, Any]
RawRow = tuple[list[str], float]

# --- text -------------------------------------------------------------------------------


def squash(text: str) -> str:
    """Lowercase letters and digits only, so header labels compare despite spacing."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def tidy(text: str | None) -> str:
    """Collapse whitespace; wrapped cells hold newlines. None becomes empty."""
    return " ".join((text or "").split())


# --- words, lines and the header --------------------------------------------------------


def group_lines(words: list[Word], tolerance: float) -> list[list[Word]]:
    """Group words into lines by their top edge, each line sorted left to right."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if lines and abs(word["top"] - lines[-1][0]["top"]) <= tolerance:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def label_groups(line: list[Word]) -> list[list[Word]]:
    """Split a header line into labels where the gap is wider than about a word's height.

    Words of one label ("Debit Amt") are a space apart; columns are much further apart.
    """
    groups: list[list[Word]] = []
    for word in line:
        gap_limit = 0.8 * (word["bottom"] - word["top"])
        if groups and word["x0"] - groups[-1][-1]["x1"] <= gap_limit:
            groups[-1].append(word)
        else:
            groups.append([word])
    return groups


def header_groups(lines: list[list[Word]]) -> list[list[Word]]:
    """The labels of a header printed on one or more lines, left to right.

    A label stacked over two lines ("Money" above "Out") is one label: parts of later lines
    that overlap a label horizontally join it, in reading order.
    """
    groups: list[list[Any]] = []
    for line in lines:
        for part in label_groups(line):
            x0, x1 = part[0]["x0"], part[-1]["x1"]
            for group in groups:
                if x0 < group[1] and x1 > group[0]:
                    group[0], group[1] = min(group[0], x0), max(group[1], x1)
                    group[2].extend(part)
                    break
            else:
                groups.append([x0, x1, list(part)])
    return [group[2] for group in sorted(groups, key=lambda g: g[0])]


def find_label(words: list[Word], label: str, start: int) -> tuple[tuple[float, float], int] | None:
    """The x span of consecutive words from ``start`` on spelling ``label``, and the next index."""
    target = squash(label)
    for first in range(start, len(words)):
        text = ""
        for last in range(first, len(words)):
            text += squash(words[last]["text"])
            if text == target:
                chunk = words[first : last + 1]
                return (min(w["x0"] for w in chunk), max(w["x1"] for w in chunk)), last + 1
            if not target.startswith(text):
                break
    return None


def find_header(lines: list[list[Word]], config: SimpleNamespace) -> tuple[int, list[tuple[float, float]]] | None:
    """Where the page's header ends (line index) and its labels' x spans, if it has one.

    Labels are found in order, so two columns may carry the same label.
    """
    count = config.header_lines
    for index in range(len(lines) - count + 1):
        words = [w for group in header_groups(lines[index : index + count]) for w in group]
        spans, start = [], 0
        for label in config.header_labels:
            found = find_label(words, label, start)
            if found is None:
                break
            spans.append(found[0])
            start = found[1]
        else:
            return index + count, spans
    return None


def column_cuts(
    spans: list[tuple[float, float]], below: list[list[Word]], rule: str
) -> list[float]:
    """X positions separating adjacent columns.

    valley: between two labels' centres, where the fewest words under the header cross
    (text overhanging a right-aligned amount column does not end up in it);
    gap_midpoint: halfway from one label's end to the next one's start;
    center_midpoint: halfway between the labels' centres.
    """
    centres = [(x0 + x1) / 2 for x0, x1 in spans]
    if rule == "gap_midpoint":
        return [(a[1] + b[0]) / 2 for a, b in pairwise(spans)]
    if rule == "center_midpoint":
        return [(a + b) / 2 for a, b in pairwise(centres)]
    words = [word for line in below for word in line]
    return [emptiest_x(a, b, words) for a, b in pairwise(centres)]


def emptiest_x(left: float, right: float, words: list[Word]) -> float:
    """The middle of the widest run of x positions in (left, right) crossed by fewest words.

    A run narrower than half a word's height is a space between words, not a gap between
    columns: then runs crossed by one more word are considered, and so on (a footer line
    that happens to cross the real gap must not push the cut into a column).
    """
    spans = [(w["x0"], w["x1"]) for w in words if w["x1"] > left and w["x0"] < right]
    xs = [left + step for step in range(1, int(right - left))]
    if not xs:
        return (left + right) / 2
    counts = [sum(1 for x0, x1 in spans if x0 <= x <= x1) for x in xs]
    heights = sorted(w["bottom"] - w["top"] for w in words) or [0.0]
    wide_enough = 0.5 * heights[len(heights) // 2]
    for level in sorted(set(counts)):
        best: list[float] = []
        run: list[float] = []
        for x, count in zip(xs, counts, strict=True):
            run = [*run, x] if count <= level else []
            best = run if len(run) > len(best) else best
        if len(best) >= wide_enough or level == max(counts):
            return (best[0] + best[-1]) / 2
    return (left + right) / 2


def split_line(line: list[Word], cuts: list[float]) -> list[str]:
    """The line's text per column: each word goes where its centre falls."""
    cells: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
    for word in line:
        centre = (word["x0"] + word["x1"]) / 2
        cells[sum(1 for cut in cuts if centre > cut)].append(word["text"])
    return [" ".join(words) for words in cells]


def panel_cut(words: list[Word], tolerance: float) -> float | None:
    """The x between two tables printed side by side, or None (issue 35).

    Two tables across a page show as one line whose words repeat themselves: the header
    "Date Details Amount Balance Date Details Amount Balance", the second half wholly to the
    right of the first. Read line by line, the two tables would interleave; split at this x,
    each is read down, the left one first.
    """
    for line in group_lines(words, tolerance):
        half = len(line) // 2
        if half < 2 or len(line) % 2:
            continue
        left, right = line[:half], line[half:]
        if [squash(w["text"]) for w in left] == [squash(w["text"]) for w in right] \
                and not any(re.search(r"\d", w["text"]) for w in line) and left[-1]["x1"] < right[0]["x0"]:
            return (float(left[-1]["x1"]) + float(right[0]["x0"])) / 2
    return None


def page_word_rows(words: list[Word], state: dict[str, Any], config: SimpleNamespace) -> Iterator[RawRow]:
    """Each text line under the page's header as cells, with its distance from the line above;
    two tables side by side (:func:`panel_cut`) are read one after the other, left first."""
    cut = panel_cut(words, config.line_tolerance)
    if cut is None:
        yield from panel_word_rows(words, state, config)
        return
    yield from panel_word_rows([w for w in words if w["x0"] < cut], state, config)
    yield from panel_word_rows([w for w in words if w["x0"] >= cut], state, config)


def panel_word_rows(words: list[Word], state: dict[str, Any], config: SimpleNamespace) -> Iterator[RawRow]:
    """Each text line under the table's header as cells, with its distance from the line above.

    Lines above a header are skipped; a page without a header reuses the last header's
    columns (kept in ``state``), or, for a table printed without any header, the columns found
    by alignment (``config.fixed_cuts``). Footers and letterheads come out too and are
    filtered later.
    Each line's top, bottom and column cuts are appended to ``state["boxes"]`` (an OCR parser
    reads a cell again from them).
    """
    lines = group_lines(words, config.line_tolerance)
    header = find_header(lines, config)
    if header is not None:
        lines = lines[header[0] :]
        state["cuts"] = column_cuts(header[1], lines, config.boundary_rule)
    if state.get("cuts") is None:
        state["cuts"] = getattr(config, "fixed_cuts", None)  # a table without a header: cuts by alignment
    if state.get("cuts") is None:
        return
    previous = None
    for line in lines:
        top = line[0]["top"]
        state.setdefault("boxes", []).append((top, max(w["bottom"] for w in line), state["cuts"]))
        yield (
            split_line(line, state["cuts"]),
            (float("inf") if previous is None else top - previous),
        )
        previous = top


def word_rows(pdf: Any, config: SimpleNamespace) -> Iterator[RawRow]:
    """Rows from the words' positions on every page."""
    state: dict[str, Any] = {}
    for page in pdf.pages:
        yield from page_word_rows(page.extract_words(), state, config)


# --- ruled tables -----------------------------------------------------------------------


def header_positions(texts: list[str], labels: list[str]) -> list[int] | None:
    """Cell index of each header label (in order) if this table row is the header, else None."""
    squashed = [squash(text) for text in texts]
    positions: list[int] = []
    start = 0
    for label in labels:
        key = squash(label)
        if key not in squashed[start:]:
            return None
        positions.append(squashed.index(key, start))
        start = positions[-1] + 1
    return positions


def page_table_rows(tables: list[Any], state: dict[str, Any], config: SimpleNamespace) -> Iterator[RawRow]:
    """Rows of the page's ruled tables under a header; a table without one continues the last."""
    for table in tables:
        gap = float("inf")
        for cells in table:
            texts = [tidy(cell) for cell in cells]
            found = header_positions(texts, config.header_labels)
            if found is not None:
                state["positions"], gap = found, float("inf")
                continue
            positions = state.get("positions")
            if positions is not None and len(texts) > max(positions):
                yield [texts[i] for i in positions], gap
                gap = 0.0


def table_rows(pdf: Any, config: SimpleNamespace) -> Iterator[RawRow]:
    """Rows from the ruled tables pdfplumber finds on every page."""
    state: dict[str, Any] = {}
    for page in pdf.pages:
        yield from page_table_rows(page.extract_tables(config.table_settings), state, config)


# --- tables aligned on the header's columns ---------------------------------------------


def page_aligned_rows(page: Any, state: dict[str, Any], config: SimpleNamespace) -> Iterator[RawRow]:
    """Rows pdfplumber finds under the header with column lines drawn at its boundaries."""
    lines = group_lines(page.extract_words(), config.line_tolerance)
    header = find_header(lines, config)
    top = 0.0
    if header is not None:
        state["cuts"] = column_cuts(header[1], lines[header[0] :], config.boundary_rule)
        top = max(
            w["bottom"] for line in lines[header[0] - config.header_lines : header[0]] for w in line
        )
    cuts = state.get("cuts")
    if not cuts:
        return
    region = page.crop((0, top, page.width, page.height))
    words = region.extract_words()
    if not words:
        return
    left = min([cuts[0]] + [w["x0"] for w in words]) - 1
    right = max([cuts[-1]] + [w["x1"] for w in words]) + 1
    settings = {
        "vertical_strategy": "explicit",
        "explicit_vertical_lines": [left, *cuts, right],
        "horizontal_strategy": "text",
    }
    width = len(config.header_labels)
    for table in region.extract_tables(settings):
        gap = float("inf")
        for cells in table:
            texts = [tidy(cell) for cell in cells][:width]
            yield texts + [""] * (width - len(texts)), gap
            gap = 0.0


def aligned_rows(pdf: Any, config: SimpleNamespace) -> Iterator[RawRow]:
    """Rows from tables aligned on the header's columns, on every page."""
    state: dict[str, Any] = {}
    for page in pdf.pages:
        yield from page_aligned_rows(page, state, config)


# --- values -----------------------------------------------------------------------------


def clean_number(text: str, config: SimpleNamespace) -> str | None:
    """Amount text as a CSV holds it ("" if empty, None if it is not an amount).

    Undoes currency tokens, thousands separators, a decimal comma, "Dr"/"Cr" suffixes,
    (parentheses) and trailing minus signs.
    """
    value = tidy(text).replace(" ", "")
    if not value:
        return ""
    for token in config.currency_tokens:
        value = value.replace(token, "")
    sign = ""
    for suffix, suffix_sign in config.suffix_signs.items():
        if value.lower().endswith(suffix.lower()):
            value, sign = value[: -len(suffix)], suffix_sign
            break
    if value.startswith("(") and value.endswith(")"):
        value, sign = value[1:-1], "-"
    if config.thousands_separator:
        value = value.replace(config.thousands_separator, "")
    value = value.replace(config.decimal_separator, ".")
    if not re.fullmatch(r"[-+]?\d+(?:\.\d+)?-?", value):
        return None
    if value.endswith("-"):
        value, sign = value[:-1], "-"
    value = value.lstrip("+")
    return "-" + value if sign == "-" and not value.startswith("-") else value


def format_date(parsed: datetime, fmt: str) -> str:
    """``strftime``, plus ``%-d`` and ``%-m`` (day and month without zero padding)."""
    return parsed.strftime(fmt.replace("%-d", str(parsed.day)).replace("%-m", str(parsed.month)))


def clean_date(text: str, formats: tuple[str, str] | list[str]) -> str | None:
    """Date text as the CSV holds it: kept when the formats agree, else converted."""
    value = tidy(text)
    if not value:
        return ""
    pdf_format, csv_format = formats
    try:
        parsed = datetime.strptime(value, pdf_format)
    except ValueError:
        return None
    return value if pdf_format == csv_format else format_date(parsed, csv_format)


def clean_value(column: str, kind: str, text: str, config: SimpleNamespace) -> str | None:
    """Normalise one cell by its column's kind; None means "not a valid value"."""
    if kind == "number":
        return clean_number(text, config)
    if kind == "date":
        return clean_date(text, config.date_formats[column])
    return tidy(text)


def amount_of(text: str, config: SimpleNamespace) -> tuple[Decimal | None, bool]:
    """An amount cell as a number (None when empty), and whether it read as an amount."""
    cleaned = clean_number(text, config)
    if cleaned is None:
        return None, False
    return (Decimal(cleaned) if cleaned else None), True


def signed_amount(cells: list[str], config: SimpleNamespace) -> tuple[Decimal | None, bool]:
    """The row's transaction amount, credits positive (None: the row has none), and validity.

    split: separate debit and credit columns; signed: one column with its own sign
    (minus, parentheses or a Dr suffix); marker: one unsigned column and a Dr/Cr column.
    """
    model = config.amounts
    if not model:
        return None, True
    if model["kind"] == "split":
        debit, debit_ok = amount_of(cells[model["debit"]], config)
        credit, credit_ok = amount_of(cells[model["credit"]], config)
        if debit is None and credit is None:
            return None, debit_ok and credit_ok
        return abs(credit or Decimal(0)) - abs(debit or Decimal(0)), debit_ok and credit_ok
    value, ok = amount_of(cells[model["amount"]], config)
    if value is None or model["kind"] == "signed":
        return value, ok
    if squash(cells[model["marker"]]) in model["debit_markers"]:
        return -abs(value), ok
    return abs(value), ok


def derived_text(source: str, signed: Decimal | None) -> str:
    """An output column computed from the signed amount: debit, credit or signed."""
    if signed is None:
        return ""
    if source == "debit":
        return format(-signed, "f") if signed < 0 else ""
    if source == "credit":
        return format(signed, "f") if signed > 0 else ""
    return format(signed, "f")


def row_values(cells: list[str], config: SimpleNamespace) -> dict[str, str | None]:
    """Output column -> normalised text for one row of cells."""
    signed, ok = signed_amount(cells, config)
    values: dict[str, str | None] = {}
    for column, (source, kind) in config.columns.items():
        if source is None:
            values[column] = ""
        elif isinstance(source, int):
            values[column] = clean_value(column, kind, cells[source], config)
        else:
            values[column] = derived_text(source, signed) if ok else None
    return values


# --- rows -------------------------------------------------------------------------------


def is_transaction(
    values: dict[str, str | None], cells: list[str], config: SimpleNamespace
) -> bool:
    """A row is kept when its required columns hold valid values and it is no summary row.

    Repeated headers, letterheads, page footers and totals fail the first test; opening,
    closing and carried-forward balance rows fail the amount or summary tests (unless the
    expected CSV keeps them, in which case the plan turns those tests off).
    """
    if any(not values[column] for column in config.required):
        return False
    if config.reject_unparsable and any(value is None for value in values.values()):
        return False
    if config.need_amount and signed_amount(cells, config)[0] is None:
        return False
    pattern = config.skip_pattern
    return not (pattern and any(re.search(pattern, cell, re.IGNORECASE) for cell in cells))


def is_continuation(values: dict[str, str | None], gap: float, config: SimpleNamespace) -> bool:
    """A line holding only text, close under a kept row, continues its description."""
    if not config.merge_continuations or gap > config.max_continuation_gap:
        return False
    filled = [column for column, value in values.items() if value or value is None]
    return bool(filled) and all(config.columns[column][1] == "text" for column in filled)


def collect_rows(raw_rows: Iterable[RawRow], config: SimpleNamespace) -> list[dict[str, str]]:
    """Keep transaction rows; append wrapped text lines to the row right above them.

    Only a line directly under a kept row (or under its earlier continuation lines) can
    continue it, so text after a footer or a summary row is never glued onto a transaction.
    """
    rows: list[dict[str, str]] = []
    chained = False
    for cells, gap in raw_rows:
        values = row_values(cells, config)
        if is_transaction(values, cells, config):
            rows.append({column: value or "" for column, value in values.items()})
            chained = True
        elif chained and is_continuation(values, gap, config):
            for column, value in values.items():
                if value:
                    rows[-1][column] = tidy(rows[-1][column] + " " + value)
        else:
            chained = False
    return rows


# --- the frame --------------------------------------------------------------------------


def build_frame(rows: list[dict[str, str]], config: SimpleNamespace) -> pd.DataFrame:
    """Write the rows as CSV text and read it back, so values parse exactly like a CSV's."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(list(config.columns))
    writer.writerows([row[column] for column in config.columns] for row in rows)
    buffer.seek(0)
    frame = pd.read_csv(buffer)
    for column, dtype in config.dtypes.items():
        frame[column] = cast(frame[column], dtype)
    return frame


def cast(series: pd.Series, dtype: str) -> pd.Series:
    """Give a column its expected dtype when reading the CSV text did not already.

    A column that cannot take the dtype is left as read: the comparison then reports the
    dtype difference instead of the parser crashing.
    """
    if str(series.dtype) == dtype:
        return series
    try:
        if dtype in {"str", "object", "string"}:
            return series.astype("str").where(series.notna(), float("nan"))
        return series.astype(dtype)
    except (ValueError, TypeError):
        return series
