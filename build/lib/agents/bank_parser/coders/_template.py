"""Turn a :class:`ParserPlan` into standalone parser source code.

The generated module has a configuration block of literals (everything derived from the
analysis), then small functions shared by every strategy plus the extraction functions of
the plan's strategy only. It imports the standard library, pdfplumber and pandas, nothing
else, and holds no sample values: only column names, header labels, dtypes and formats.

The function sources below are plain text; tests parse every rendering with ``ast`` and
the development check runs them on real statements in a subprocess.
"""

from __future__ import annotations

import json

from agents.bank_parser.coders._plan import ParserPlan

HEADER = '''"""Bank statement parser written by sandloop's offline coder.

Strategy: {strategy}.
{strategy_doc}
parse(pdf_path) returns the transactions as a DataFrame with the columns and dtypes below;
each cell is first normalised to the text a CSV export would hold, then the frame is read
with pandas.read_csv so that values and dtypes match a CSV read the same way.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from datetime import datetime
{extra_imports}
import pandas as pd
import pdfplumber
'''

STRATEGY_DOCS = {
    "ruled_tables": "Rows come from the ruled tables pdfplumber finds on each page.",
    "word_positions": (
        "Rows come from the words' positions: column boundaries lie between the header\n"
        "labels, words are grouped into lines by their top edge and placed by x position."
    ),
    "aligned_tables": (
        "Rows come from pdfplumber tables with column lines drawn at the header's\n"
        "boundaries and rows found by text alignment."
    ),
}

COMMON = '''

TEXT_DTYPES = {"str", "object", "string"}
NUMBER = re.compile(r"[-+]?\\d+(?:\\.\\d+)?-?")


def parse(pdf_path: str) -> pd.DataFrame:
    """Read every page of the statement and return its transactions."""
    with pdfplumber.open(pdf_path) as pdf:
        raw_rows = list(extract_rows(pdf))
    return build_frame(collect_rows(raw_rows))


def squash(text: str) -> str:
    """Lowercase letters and digits only, so header labels compare despite spacing."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def tidy(text: str | None) -> str:
    """Collapse whitespace; wrapped cells hold newlines. None becomes empty."""
    return " ".join((text or "").split())


def clean_number(text: str) -> str | None:
    """Amount text as a CSV holds it ("" if empty, None if it is not an amount)."""
    value = tidy(text).replace(" ", "")
    if not value:
        return ""
    for token in CURRENCY_TOKENS:
        value = value.replace(token, "")
    sign = ""
    for suffix, suffix_sign in SUFFIX_SIGNS.items():
        if value.lower().endswith(suffix.lower()):
            value, sign = value[: -len(suffix)], suffix_sign
    if value.startswith("(") and value.endswith(")"):
        value, sign = value[1:-1], "-"
    if THOUSANDS_SEPARATOR:
        value = value.replace(THOUSANDS_SEPARATOR, "")
    value = value.replace(DECIMAL_SEPARATOR, ".")
    if not NUMBER.fullmatch(value):
        return None
    if value.endswith("-"):
        value, sign = value[:-1], "-"
    return sign + value if sign and not value.startswith("-") else value


def clean_date(column: str, text: str) -> str | None:
    """Date text as the CSV holds it: kept, or converted when the formats differ."""
    value = tidy(text)
    if not value:
        return ""
    pdf_format, csv_format = DATE_FORMATS[column]
    try:
        parsed = datetime.strptime(value, pdf_format)
    except ValueError:
        return None
    return value if pdf_format == csv_format else parsed.strftime(csv_format)


def clean_value(column: str, text: str) -> str | None:
    """Normalise one cell by its column's kind; None means "not a valid value"."""
    kind = COLUMNS[column][1]
    if kind == "number":
        return clean_number(text)
    if kind == "date":
        return clean_date(column, text)
    return tidy(text)


def to_values(cells: dict[str, str]) -> dict[str, str | None]:
    """Output column -> normalised text, from header label -> cell text."""
    return {
        column: clean_value(column, cells.get(label, "")) if label else ""
        for column, (label, _kind) in COLUMNS.items()
    }


def is_transaction(values: dict[str, str | None]) -> bool:
    """A row is kept when its required columns hold valid values.

    Repeated headers, letterheads, page footers and totals fail this test.
    """
    if any(not values[column] for column in REQUIRED):
        return False
    return not (REJECT_UNPARSABLE and any(v is None for v in values.values()))


def is_continuation(values: dict[str, str | None], gap: float) -> bool:
    """A line holding only text (a wrapped description) right under a row continues it."""
    if not MERGE_CONTINUATIONS or gap > MAX_CONTINUATION_GAP:
        return False
    filled = [c for c, v in values.items() if v or v is None]
    return bool(filled) and all(COLUMNS[c][1] == "text" for c in filled)


def collect_rows(raw_rows: list[tuple[dict[str, str], float]]) -> list[dict[str, str]]:
    """Keep transaction rows; append wrapped text lines to the row they continue."""
    rows: list[dict[str, str]] = []
    for cells, gap in raw_rows:
        values = to_values(cells)
        if is_transaction(values):
            rows.append({c: v or "" for c, v in values.items()})
        elif rows and is_continuation(values, gap):
            append_text(rows[-1], values)
    return rows


def append_text(row: dict[str, str], values: dict[str, str | None]) -> None:
    """Add a continuation line's text to the row it continues."""
    for column, value in values.items():
        if value:
            row[column] = tidy(row[column] + " " + value)


def build_frame(rows: list[dict[str, str]]) -> pd.DataFrame:
    """Write the rows as CSV text and read it back, so values parse exactly like a CSV's."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(list(COLUMNS))
    writer.writerows([row[column] for column in COLUMNS] for row in rows)
    buffer.seek(0)
    frame = pd.read_csv(buffer)
    for column, dtype in DTYPES.items():
        frame[column] = cast(frame[column], dtype)
    return frame


def cast(series: pd.Series, dtype: str) -> pd.Series:
    """Give a column its expected dtype when reading the CSV text did not already."""
    if str(series.dtype) == dtype:
        return series
    if dtype in TEXT_DTYPES:
        return series.astype("str").where(series.notna(), float("nan"))
    return series.astype(dtype)
'''

TABLES = '''

def extract_rows(pdf: pdfplumber.PDF) -> Iterator[tuple[dict[str, str], float]]:
    """Yield (header label -> cell text, gap) for each table row under a header.

    A table without its own header continues the last header's columns (the next page of
    the same statement). The gap is 0 within a table, infinite at a table's first row.
    """
    positions = None
    for page in pdf.pages:
        for table in page.extract_tables(TABLE_SETTINGS):
            gap = float("inf")
            for cells in table:
                texts = [tidy(cell) for cell in cells]
                found = header_positions(texts)
                if found is not None:
                    positions = found
                elif positions is not None and len(texts) > max(positions.values()):
                    yield {label: texts[i] for label, i in positions.items()}, gap
                    gap = 0.0


def header_positions(texts: list[str]) -> dict[str, int] | None:
    """Header label -> cell index if this row is the header row, else None."""
    squashed = [squash(text) for text in texts]
    wanted = [squash(label) for label in HEADER_LABELS]
    if not all(label in squashed for label in wanted):
        return None
    return {label: squashed.index(key) for label, key in zip(HEADER_LABELS, wanted, strict=True)}
'''

WORD_HEADER = '''

def group_lines(words: list[dict]) -> list[list[dict]]:
    """Group words into lines by their top edge, each line sorted left to right."""
    lines: list[list[dict]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if lines and abs(word["top"] - lines[-1][0]["top"]) <= LINE_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def find_label(line: list[dict], label: str) -> tuple[float, float] | None:
    """The x span of consecutive words spelling ``label`` in this line, if any."""
    target = squash(label)
    for start in range(len(line)):
        text = ""
        for word in line[start:]:
            text += squash(word["text"])
            if text == target:
                return line[start]["x0"], word["x1"]
            if not target.startswith(text):
                break
    return None


def find_header(lines: list[list[dict]]) -> tuple[int, list[tuple[float, float]]] | None:
    """Index of the page's header line and its labels' x spans, if the page has one."""
    for index, line in enumerate(lines):
        spans = [find_label(line, label) for label in HEADER_LABELS]
        if all(span is not None for span in spans):
            return index, spans
    return None


def column_cuts(spans: list[tuple[float, float]], below: list[list[dict]]) -> list[float]:
    """X positions separating adjacent columns, per BOUNDARY_RULE.

    valley: between two labels' centres, where the fewest words under the header cross
    (text overhanging a right-aligned amount column does not end up in it);
    gap_midpoint: halfway from one label's end to the next one's start;
    center_midpoint: halfway between the labels' centres.
    """
    centres = [(x0 + x1) / 2 for x0, x1 in spans]
    if BOUNDARY_RULE == "gap_midpoint":
        return [(a[1] + b[0]) / 2 for a, b in pairwise(spans)]
    if BOUNDARY_RULE == "center_midpoint":
        return [(a + b) / 2 for a, b in pairwise(centres)]
    words = [word for line in below for word in line]
    return [emptiest_x(a, b, words) for a, b in pairwise(centres)]


def emptiest_x(left: float, right: float, words: list[dict]) -> float:
    """The middle of the widest run of x positions in (left, right) crossed by fewest words."""
    spans = [(w["x0"], w["x1"]) for w in words if w["x1"] > left and w["x0"] < right]
    xs = [left + step for step in range(1, int(right - left))]
    if not xs:
        return (left + right) / 2
    counts = [sum(1 for x0, x1 in spans if x0 <= x <= x1) for x in xs]
    least = min(counts)
    best: list[float] = []
    run: list[float] = []
    for x, count in zip(xs, counts, strict=True):
        run = [*run, x] if count == least else []
        best = run if len(run) > len(best) else best
    return (best[0] + best[-1]) / 2
'''

WORDS = '''

def extract_rows(pdf: pdfplumber.PDF) -> Iterator[tuple[dict[str, str], float]]:
    """Yield (header label -> words text, gap to the previous line) for each text line.

    Lines above a page's header are skipped; a page without a header reuses the last
    header's columns. Footers and letterheads come out too and are filtered later.
    """
    cuts = None
    for page in pdf.pages:
        lines = group_lines(page.extract_words())
        header = find_header(lines)
        if header is not None:
            lines = lines[header[0] + 1 :]
            cuts = column_cuts(header[1], lines)
        if cuts is not None:
            yield from line_rows(lines, cuts)


def line_rows(lines: list[list[dict]], cuts: list[float]) -> Iterator[tuple[dict[str, str], float]]:
    """Each line split into columns, with its distance from the line above."""
    previous_top = None
    for line in lines:
        top = line[0]["top"]
        gap = float("inf") if previous_top is None else top - previous_top
        previous_top = top
        yield split_line(line, cuts), gap


def split_line(line: list[dict], cuts: list[float]) -> dict[str, str]:
    """Header label -> the line's words whose centre lies in that label's column."""
    cells: dict[str, list[str]] = {label: [] for label in HEADER_LABELS}
    for word in line:
        centre = (word["x0"] + word["x1"]) / 2
        column = sum(1 for cut in cuts if centre > cut)
        cells[HEADER_LABELS[column]].append(word["text"])
    return {label: " ".join(words) for label, words in cells.items()}
'''

ALIGNED = '''

def extract_rows(pdf: pdfplumber.PDF) -> Iterator[tuple[dict[str, str], float]]:
    """Yield (header label -> cell text, gap) for each row of the table under the header.

    The column lines are drawn at the header's boundaries; pdfplumber finds the rows by
    text alignment. A page without a header reuses the last header's columns.
    """
    cuts = None
    for page in pdf.pages:
        lines = group_lines(page.extract_words())
        header = find_header(lines)
        top = 0.0
        if header is not None:
            cuts = column_cuts(header[1], lines[header[0] + 1 :])
            top = max(word["bottom"] for word in lines[header[0]])
        if cuts is not None:
            yield from table_rows(page.crop((0, top, page.width, page.height)), cuts)


def table_rows(
    region: pdfplumber.page.Page, cuts: list[float]
) -> Iterator[tuple[dict[str, str], float]]:
    """The rows pdfplumber finds in ``region`` between vertical lines at ``cuts``."""
    words = region.extract_words()
    if not words:
        return
    left = min([cuts[0]] + [word["x0"] for word in words]) - 1
    right = max([cuts[-1]] + [word["x1"] for word in words]) + 1
    settings = {
        "vertical_strategy": "explicit",
        "explicit_vertical_lines": [left, *cuts, right],
        "horizontal_strategy": "text",
    }
    for table in region.extract_tables(settings):
        gap = float("inf")
        for cells in table:
            yield dict(zip(HEADER_LABELS, map(tidy, cells), strict=False)), gap
            gap = 0.0
'''

#: The extraction functions each strategy's parser carries.
EXTRACTORS = {
    "ruled_tables": TABLES,
    "word_positions": WORD_HEADER + WORDS,
    "aligned_tables": WORD_HEADER + ALIGNED,
}


def render(plan: ParserPlan) -> str:
    """The complete parser source for ``plan``."""
    header = HEADER.format(
        strategy=plan.label,
        strategy_doc=STRATEGY_DOCS[plan.strategy],
        extra_imports="" if plan.strategy == "ruled_tables" else "from itertools import pairwise\n",
    )
    return header + "\n" + config_block(plan) + COMMON + EXTRACTORS[plan.strategy]


def config_block(plan: ParserPlan) -> str:
    """Write the literals at the top of the parser: what it looks for, how it normalises."""
    lines = [
        "# --- configuration, derived from the statement's analysis ---",
        _assign("STRATEGY", plan.label),
        "",
        "# Header labels as printed in the PDF, left to right (they locate the table).",
        _assign("HEADER_LABELS", list(plan.header_labels)),
        "# Output column -> (header label it comes from or None, kind of value).",
        _assign("COLUMNS", {c.name: (c.label, c.kind) for c in plan.columns}),
        "# Output column -> dtype of the expected frame.",
        _assign("DTYPES", {c.name: c.dtype for c in plan.columns}),
        *_row_rules(plan),
        *_value_rules(plan),
        *_strategy_settings(plan),
    ]
    return "\n".join(lines)


def _row_rules(plan: ParserPlan) -> list[str]:
    """Config lines deciding which rows are transactions and which continue one."""
    return [
        f"# Rows are transactions only if these hold valid values ({plan.row_filter} filter).",
        _assign("REQUIRED", list(plan.required)),
        _assign("REJECT_UNPARSABLE", plan.row_filter == "strict"),
        "# Lines with only text right under a row continue its description.",
        _assign("MERGE_CONTINUATIONS", plan.continuation == "merge"),
        _assign("MAX_CONTINUATION_GAP", plan.max_continuation_gap),
        "",
    ]


def _value_rules(plan: ParserPlan) -> list[str]:
    """Config lines for normalising dates and amounts."""
    dates = {c.name: (c.date.pdf_format, c.date.csv_format) for c in plan.columns if c.date}
    return [
        "# Date column -> (format in the PDF, format in the CSV); equal formats keep the text.",
        _assign("DATE_FORMATS", dates),
        _assign("THOUSANDS_SEPARATOR", plan.numbers.thousands),
        _assign("DECIMAL_SEPARATOR", plan.numbers.decimal),
        _assign("CURRENCY_TOKENS", list(plan.numbers.currency_tokens)),
        "# Amount suffix -> sign it gives the amount.",
        _assign("SUFFIX_SIGNS", dict(plan.numbers.suffix_signs)),
    ]


def _strategy_settings(plan: ParserPlan) -> list[str]:
    """Config lines only the plan's extraction strategy reads."""
    if plan.strategy == "ruled_tables":
        return [
            "# pdfplumber table settings (empty: find tables by their ruling lines).",
            "TABLE_SETTINGS = {}",
        ]
    return [
        "# Words whose tops differ by at most this many points share a line.",
        _assign("LINE_TOLERANCE", plan.line_tolerance),
        _assign("BOUNDARY_RULE", plan.boundary),
    ]


def _assign(name: str, value: object) -> str:
    """``NAME = literal``; a long dict or list goes one item per line."""
    text = literal(value)
    if len(name) + len(text) <= 92 or not value or not isinstance(value, (dict, list)):
        return f"{name} = {text}"
    if isinstance(value, dict):
        body = [f"    {literal(k)}: {literal(v)}," for k, v in value.items()]
        return f"{name} = {{\n" + "\n".join(body) + "\n}"
    body = [f"    {literal(v)}," for v in value]
    return f"{name} = [\n" + "\n".join(body) + "\n]"


def literal(value: object) -> str:
    """A Python literal for plain data, strings double-quoted as the project formats them."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)
