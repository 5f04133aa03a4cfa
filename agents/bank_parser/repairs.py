"""The repairs a scan's parser says it made (issue 24), and its OCR cost, read from its stderr.

The parser (generated code, so untrusted) prints one line per repair:
``sandloop-repair {"row": 12, "column": "Balance", "before": "1242914", "after": "12429.14",
"rule": "decimal point"}`` (see :mod:`.coders._repair_runtime`). Each line is decoded with
the bounded JSON decoder, its fields type-checked and made printable and short; at most
:data:`MAX_REPAIRS` are read. A claim is *confirmed* only when its rule is one the runtime
applies and the repair changed no digit (letters read for digits count as those digits; a
``re-read``, the cell OCR'd again alone, is a new reading that need only be a number; a
``word``, issue 46, may differ only by OCR's confusions and a space):
a claim that fails is reported as unconfirmed and counts for nothing. Confirmed repairs let
the coverage check match the PDF line that still shows the misread cell
(:func:`agents.bank_parser.verify.verify`). The parser's ``sandloop-ocr`` line (pages, OCR
seconds, cells read again) is read the same way, numbers only, for the execute step's line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.bank_parser.coders._words_runtime import bare, reads_alike
from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.untrusted_text import one_line

MARKER = b"sandloop-repair "
OCR_MARKER = b"sandloop-ocr "
MAX_REPAIRS = 200
MAX_LINE_BYTES = 600
RULES = ("decimal point", "sign", "parenthesis", "letters", "re-read")
#: The rule of a word OCR confused, replaced by the statement's own (issue 46): text, not a figure.
WORD_RULE = "word"
#: The rule of a line OCR did not read as a row, taken because it alone closes a balance break (issue 46).
FOUND_RULE = "row found"
#: How a found row's ``before`` starts when its line came from a band of the page read again
#: (``find_unread_rows``): a line the first reading, and so the analysis's text, never had.
BAND_MARK = "(band read again)"
_BOUNDS = JSONBounds(max_bytes=MAX_LINE_BYTES, max_depth=1, max_values=12)
#: The letters OCR reads for digits, as the runtime's ``letters`` rule maps them.
_LETTERS = str.maketrans("SsOolI|", "5500111")


@dataclass(frozen=True)
class Repair:
    """One repaired cell: the frame's row, the PDF column, the text as read and as repaired."""

    row: int
    column: str
    before: str
    after: str
    rule: str
    confirmed: bool = True

    def describe(self) -> str:
        """``row 12 Balance: 1242914 -> 12429.14 (decimal point)``."""
        note = "" if self.confirmed else ", unconfirmed: ignored"
        return f"row {self.row} {self.column}: {self.before} -> {self.after} ({self.rule}{note})"

    def record(self) -> dict[str, object]:
        """Plain data for the attempt's files."""
        return {"row": self.row, "column": self.column, "before": self.before, "after": self.after,
                "rule": self.rule, "confirmed": self.confirmed}


def read_repairs(stderr: bytes) -> tuple[Repair, ...]:
    """The repairs claimed on a parser's stderr, in order (malformed lines are skipped)."""
    found: list[Repair] = []
    for line in stderr.splitlines():
        if len(found) >= MAX_REPAIRS:
            break
        if line.startswith(MARKER) and len(line) <= MAX_LINE_BYTES:
            repair = _decode(line[len(MARKER):])
            if repair is not None:
                found.append(repair)
    return tuple(found)


def _decode(raw: bytes) -> Repair | None:
    try:
        claim = loads_bounded(raw, _BOUNDS)
    except BoundedJSONError:
        return None
    if not isinstance(claim, dict):
        return None
    row, texts = claim.get("row"), [claim.get(k) for k in ("column", "before", "after", "rule")]
    if not isinstance(row, int) or isinstance(row, bool) or row < 0 or not all(isinstance(t, str) for t in texts):
        return None
    column, before, after, rule = (one_line(str(t), 80) for t in texts)
    return Repair(row, column, before, after, rule, confirmed=confirms(rule, before, after))


def confirms(rule: str, before: str, after: str) -> bool:
    """Whether a claimed repair is one the runtime makes: a known rule that changed no digit
    (``letters``: only turned letters into the digits they look like; ``word``: a text that
    reads alike with OCR's confusions, a space put in or taken out; ``row found``: a line read
    as a row, which need only hold figures: every check runs on the frame with it)."""
    if rule == WORD_RULE:  # only OCR's confusions (I/l/1, J/], O/0, S/$, rn/m), a space and a stray mark apart
        forms = (before.replace(" ", ""), "".join(bare(word) for word in before.split()))
        return before != after and any(reads_alike(form, after.replace(" ", "")) for form in forms)
    digits_before, digits_after = re.sub(r"\D", "", before), re.sub(r"\D", "", after)
    if rule == FOUND_RULE:  # a whole line taken as a row; the running balance check judges it again
        return bool(digits_after)
    if rule == "re-read":  # a new reading of the cell: all the host can tell is that it is a number
        return bool(digits_after)
    if rule == "letters":
        read = re.sub(r"\D", "", before.translate(_LETTERS))
        return bool(digits_after) and digits_after in read and len(digits_after) > len(digits_before)
    return rule in RULES and bool(digits_before) and digits_before == digits_after


@dataclass(frozen=True)
class OcrCost:
    """What a scan's parser says its OCR cost: pages, page reads (one per OCR setting tried),
    their seconds, and the cells it read again alone."""

    pages: int
    page_reads: int
    ocr_seconds: float
    rereads: int
    reread_seconds: float
    peak_mib: float = 0.0
    """The parser's peak memory as the sandbox's limit counts it (its cgroup; issue 35); 0: not said."""
    rss_mib: float = 0.0
    """The parser process's own peak resident set; 0: not said."""

    @property
    def seconds_per_page(self) -> float:
        """OCR seconds per page read (0 when no page was read)."""
        return self.ocr_seconds / self.page_reads if self.page_reads else 0.0

    @classmethod
    def from_record(cls, record: dict[str, float]) -> OcrCost:
        """The cost a summary's :meth:`record` keeps."""
        return cls(int(record.get("pages", 0)), int(record.get("page_reads", 0)), record.get("ocr_seconds", 0.0),
                   int(record.get("rereads", 0)), record.get("reread_seconds", 0.0),
                   record.get("peak_mib", 0.0), record.get("rss_mib", 0.0))

    def record(self) -> dict[str, float]:
        """Plain numbers for summary.json, with the seconds per page read."""
        return {"pages": self.pages, "page_reads": self.page_reads, "ocr_seconds": round(self.ocr_seconds, 3),
                "seconds_per_page": round(self.seconds_per_page, 3), "rereads": self.rereads,
                "reread_seconds": round(self.reread_seconds, 3), "peak_mib": round(self.peak_mib, 1),
                "rss_mib": round(self.rss_mib, 1)}

    def reads(self) -> str:
        """``2 page read(s) in 7.9 s (4.0 s a page), 6 cell(s) read again in 1.1 s``."""
        text = f"{self.page_reads} page read(s) in {self.ocr_seconds:.1f} s ({self.seconds_per_page:.1f} s a page)"
        if self.rereads:
            text += f", {self.rereads} cell(s) read again in {self.reread_seconds:.1f} s"
        if self.peak_mib:
            text += f", peak memory {self.peak_mib:.0f} MiB"
        return text

    def describe(self) -> str:
        """``OCR 2 page read(s) in 7.9 s (4.0 s a page), 6 cell(s) read again in 1.1 s``."""
        return f"OCR {self.reads()}"


def read_ocr_cost(stderr: bytes) -> OcrCost | None:
    """The last OCR cost line on a parser's stderr, if one decodes (numbers, bounded)."""
    lines = [line for line in stderr.splitlines() if line.startswith(OCR_MARKER) and len(line) <= MAX_LINE_BYTES]
    if not lines:
        return None
    try:
        cost = loads_bounded(lines[-1][len(OCR_MARKER):], _BOUNDS)
    except BoundedJSONError:
        return None
    names = ("pages", "page_reads", "ocr_seconds", "rereads", "reread_seconds")
    if not isinstance(cost, dict):
        return None
    values = [cost.get(name) for name in names]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e7 for v in values):
        return None
    peak, rss = (_mib(cost.get(name)) for name in ("peak_mib", "rss_mib"))
    return OcrCost(int(values[0]), int(values[1]), float(values[2]), int(values[3]), float(values[4]),  # type: ignore[arg-type]
                   peak, rss)


def _mib(value: object) -> float:
    """A memory figure the parser said, or 0.0 (not said) for anything but a plausible number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e7 else 0.0


def unread_rows(repairs: Sequence[Repair]) -> frozenset[int]:
    """Rows found in a band of the page read again: the statement's text (the analysis's OCR)
    lacks their line, so the row count and coverage checks leave them out; the running balance
    confirmed each on both sides."""
    return frozenset(r.row for r in repairs if r.confirmed and r.rule == FOUND_RULE and r.before.startswith(BAND_MARK))


def repaired_rows(repairs: Sequence[Repair]) -> frozenset[int]:
    """Rows with a confirmed repair of a figure (a word's repair leaves the figures as read)."""
    return frozenset(r.row for r in repairs if r.confirmed and r.rule != WORD_RULE)
