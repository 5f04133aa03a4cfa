"""Turn a :class:`ParserPlan` into standalone parser source code.

The generated module is: a docstring, imports (standard library, pdfplumber, pandas), a
``CONFIG`` block of literals derived from the analysis (commented), ``parse``, and the
source of the :mod:`~agents.bank_parser.coders._runtime` functions its strategy needs,
copied verbatim. It holds no sample values: only column names, header labels, dtypes,
formats and rules. Tests parse every rendering with ``ast``; only sandboxes run it.
"""

from __future__ import annotations

import functools
import inspect
import json

from agents.bank_parser.coders import _ocr_runtime as ort
from agents.bank_parser.coders import _repair_runtime as rrt
from agents.bank_parser.coders import _runtime as rt
from agents.bank_parser.coders import _search_runtime as srt
from agents.bank_parser.coders import _words_runtime as wrt
from agents.bank_parser.coders._plan import ParserPlan

HEADER = '''"""Bank statement parser written by sandloop's offline coder.

Strategy: {strategy}.
{strategy_doc}
parse(pdf_path) returns the transactions as a DataFrame with the columns and dtypes in
CONFIG; each cell is first normalised to the text a CSV export would hold, then the frame is
read with pandas.read_csv so that values and dtypes match a CSV read the same way.
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
import pdfplumber

Word = dict[str, Any]
RawRow = tuple[list[str], float]
'''

STRATEGY_DOCS = {
    "ruled_tables": "Rows come from the ruled tables pdfplumber finds on each page.",
    "word_positions": (
        "Rows come from the words' positions: column boundaries lie between the header\n"
        "labels, words are grouped into lines by their top edge and placed by x position."
    ),
    "ocr_words": (
        "The PDF is a scan: each page is rendered, deskewed and read by Tesseract OCR; rows\n"
        "come from the OCR words' positions as for a text PDF. A cell the running balance\n"
        "shows misread (a lost decimal point or minus, S for 5) is repaired when exactly one\n"
        "reading fits the rows before and after it; where the balance still breaks, a line\n"
        "not taken as a row is read again as one and taken if it alone closes the break; a word OCR confused "
        "(\"P lyer\") becomes the\n"
        "word the statement has more often (\"P Iyer\"); the repairs are reported on stderr.\n"
        "Other OCR settings are tried while the running balance does not add up."
    ),
    "aligned_tables": (
        "Rows come from pdfplumber tables with column lines drawn at the header's\n"
        "boundaries and rows found by text alignment."
    ),
}

PARSE = '''

def parse(pdf_path: str) -> pd.DataFrame:
    """Read every page of the statement and return its transactions."""
    with pdfplumber.open(pdf_path) as pdf:
        raw_rows = list({extract}(pdf, CONFIG))
    return build_frame(collect_rows(raw_rows, CONFIG), CONFIG)
'''

WORD_HEADER = (
    rt.group_lines,
    rt.label_groups,
    rt.header_groups,
    rt.find_label,
    rt.find_header,
    rt.column_cuts,
    rt.emptiest_x,
)
OCR = (
    ort.render_gray,
    ort.skew_angle,
    ort.prepare,
    ort.erase_rules,
    ort.ocr_words,
    ort.page_dpi,
    ort.page_ocr_words,
    ort.unrotate,
    ort.reread_cell,
    ort.balance_breaks,
    ort.cell_reader,
    ort.read_band,
    ort.band_reader,
    ort.peak_mib,
    ort.report_ocr,
    ort.ocr_collect,
)
#: Repair of OCR misreads by the running balance (issue 24), carried by every OCR parser.
REPAIR = (
    rrt.repair_candidates,
    rrt.chain_values,
    rrt.link_holds,
    rrt.chain_orientation,
    rrt.amount_positions,
    rrt.chain_members,
    rrt.placeholder,
    rrt.edited_transaction,
    rrt.balance_only,
    rrt.broken_stretches,
    rrt.stretch_fits,
    rrt.stretch_repairs,
    rrt.new_reading,
    rrt.editable_rows,
    rrt.pair_repairs,
    rrt.edits_fit,
    rrt.repair_rows,
    rrt.repair_record,
    rrt.report_repairs,
)
#: A balance break searched for the row OCR lost (issue 46), carried by every OCR parser.
SEARCH = (
    srt.date_positions,
    srt.line_readings,
    srt.date_column,
    srt.parsed_date,
    srt.date_between,
    srt.gap_bounds,
    srt.closes,
    srt.gap_finds,
    srt.broken_links,
    srt.find_lost_rows,
    srt.find_unread_rows,
    srt.frame_places,
    srt.found_record,
    srt.renumber,
)
#: Repair of OCR-confused words from the statement's own text (issue 46), carried by every OCR parser.
WORDS = (
    wrt.confusion_key,
    wrt.reads_alike,
    wrt.bare,
    wrt.text_positions,
    wrt.kept_rows,
    wrt.word_counts,
    wrt.keyed,
    wrt.best_of,
    wrt.word_options,
    wrt.fix_words,
    wrt.repair_words,
)
OCR_PARSE = '''

def parse(pdf_path: str) -> pd.DataFrame:
    """OCR every page of the scanned statement and return its transactions."""
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one CPU in the sandbox: more threads only wait
    with pdfplumber.open(pdf_path) as pdf:
        rows = ocr_collect(pdf, CONFIG)
    return build_frame(rows, CONFIG)
'''
OCR_IMPORTS = ("import os\nimport time\n\nimport numpy as np  # noqa: F401 - used by skew_angle\n"
               "import pytesseract  # noqa: F401\n")
EXTRACTION = {
    "ocr_words": ("ocr_collect", (*WORD_HEADER, rt.split_line, rt.panel_cut, rt.page_word_rows, rt.panel_word_rows,
                                  *OCR, *REPAIR, *SEARCH, *WORDS)),
    "ruled_tables": ("table_rows", (rt.header_positions, rt.page_table_rows, rt.table_rows)),
    "word_positions": ("word_rows", (*WORD_HEADER, rt.split_line, rt.panel_cut, rt.page_word_rows, rt.panel_word_rows,
                                     rt.word_rows)),
    "aligned_tables": ("aligned_rows", (*WORD_HEADER, rt.page_aligned_rows, rt.aligned_rows)),
}
COMMON = (
    rt.squash,
    rt.tidy,
    rt.clean_number,
    rt.format_date,
    rt.clean_date,
    rt.clean_value,
    rt.amount_of,
    rt.signed_amount,
    rt.derived_text,
    rt.row_values,
    rt.is_transaction,
    rt.is_continuation,
    rt.collect_rows,
    rt.build_frame,
    rt.cast,
)

#: What each CONFIG entry means, written above it in the parser.
COMMENTS = {
    "header_labels": "Header labels as printed in the PDF, left to right (they locate the table; "
    "for a table\n# printed without a header: names given by the columns' values).",
    "header_lines": "Lines the header takes (2: labels stacked over two lines).",
    "columns": "Output column -> [source, kind]; source: a header position, the 'debit'/'credit'/"
    "'signed'\n# part of the row's amount (see amounts), or None (left empty).",
    "dtypes": "Output column -> dtype of the expected frame.",
    "date_formats": "Date column -> [format in the PDF, format in the CSV]; equal formats keep the "
    "text.",
    "thousands_separator": "How amounts are printed: separators, currency marks, Dr/Cr signs.",
    "amounts": "Where a row's amount is and how its direction shows (split / signed / marker).",
    "required": "A row is a transaction only if these columns hold valid values...",
    "reject_unparsable": "...every value reads (strict filter)...",
    "need_amount": "...it has an amount (balance-only rows are not transactions)...",
    "skip_pattern": "...and no cell reads like a summary row (empty: summary rows are kept).",
    "merge_continuations": "Text-only lines right under a row (within the gap) continue its text.",
    "table_settings": "pdfplumber table settings (empty: find tables by their ruling lines).",
    "balance_index": "Header position of the running balance (checks the OCR reading; None: no check).",
    "ocr_settings": "OCR settings tried in order until the balances add up: dpi, Tesseract psm, "
    "threshold (0: none).",
    "ocr_budget_seconds": "No further OCR setting is tried after this many seconds.",
    "line_tolerance": "Words whose tops differ by at most this many points share a line.",
    "boundary_rule": "How column boundaries are placed between header labels.",
    "fixed_cuts": "The table has no header: column boundaries (points) found by the alignment of "
    "its date-led lines.",
}


def render(plan: ParserPlan) -> str:
    """The complete parser source for ``plan``."""
    extract, functions = EXTRACTION[plan.strategy]
    header = HEADER.format(strategy=plan.label, strategy_doc=STRATEGY_DOCS[plan.strategy])
    body = "".join(f"\n\n{_source(fn)}" for fn in (*functions, *COMMON))
    if plan.strategy == "ocr_words":
        return header + OCR_IMPORTS + "\n" + config_block(plan) + "\n" + OCR_PARSE + body
    return header + "\n" + config_block(plan) + "\n" + PARSE.format(extract=extract) + body


@functools.cache
def ocr_module_source() -> str:
    """A standalone module of the OCR functions and the runtime functions they call: what the
    statement probe's sandbox imports to OCR a scan (the code a scan's parser carries)."""
    imports = HEADER[HEADER.index("from __future__"):]
    functions = (*WORD_HEADER, rt.split_line, rt.panel_cut, rt.page_word_rows, rt.panel_word_rows, *OCR, *REPAIR,
                 *SEARCH, *WORDS, *COMMON)
    return ('"""OCR functions of sandloop\'s parser runtime, copied for the statement probe."""\n\n'
            + imports + OCR_IMPORTS + "".join(f"\n\n{_source(fn)}" for fn in functions))


@functools.cache
def _source(function: object) -> str:
    """A runtime function's source, as written in :mod:`_runtime`."""
    return inspect.getsource(function).rstrip() + "\n"  # type: ignore[arg-type]


def config_block(plan: ParserPlan) -> str:
    """``CONFIG = SimpleNamespace(...)``: what the parser looks for and how it normalises."""
    lines = [
        "# --- configuration, derived from the statement's analysis ---",
        "CONFIG = SimpleNamespace(",
    ]
    for name, value in plan.config().items():
        if name in COMMENTS:
            lines.append(f"    # {COMMENTS[name]}".replace("\n# ", "\n    # "))
        lines.append(_assign(name, value))
    lines.append(")")
    return "\n".join(lines)


def _assign(name: str, value: object) -> str:
    """``    name=literal,``; a long dict or list goes one item per line."""
    text = literal(value)
    if len(name) + len(text) <= 88 or not value or not isinstance(value, (dict, list)):
        return f"    {name}={text},"
    if isinstance(value, dict):
        body = [f"        {literal(k)}: {literal(v)}," for k, v in value.items()]
        return f"    {name}={{\n" + "\n".join(body) + "\n    },"
    body = [f"        {literal(v)}," for v in value]
    return f"    {name}=[\n" + "\n".join(body) + "\n    ],"


def literal(value: object) -> str:
    """A Python literal for plain data, strings double-quoted as the project formats them."""
    if isinstance(value, str):
        if "\\" in value and value.isprintable() and '"' not in value and not value.endswith("\\"):
            return f'r"{value}"'  # a regular expression reads better raw
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)
