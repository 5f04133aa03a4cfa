"""The repairs a scan's parser claims (issue 24), read on the host from its untrusted stderr.

The parser is generated code: what it prints is decoded with bounds, and a claim counts only
when it is a repair the runtime makes (a known rule that changed no digit). Confirmed repairs
let the coverage check match a PDF line that still shows the misread cell.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
from hypothesis import HealthCheck, given, settings

from agents.bank_parser.repairs import (
    MAX_LINE_BYTES,
    MAX_REPAIRS,
    OcrCost,
    Repair,
    confirms,
    read_ocr_cost,
    read_repairs,
)
from agents.bank_parser.report import ParserRunSummary
from agents.bank_parser.statement_facts import read_facts
from agents.bank_parser.verify import verify
from tests.fuzz.decoders import STDERR_INPUTS, check_parser_stderr


def line(**claim: object) -> bytes:
    return b"sandloop-repair " + json.dumps(claim).encode()


GOOD = {"row": 3, "column": "Balance", "before": "1242914", "after": "12429.14", "rule": "decimal point"}


class TestReadRepairs:
    """read_repairs: marked lines only, bounded, typed."""

    def test_reads_marked_lines_among_other_output(self) -> None:
        """Lines without the marker (a parser's own prints, warnings) are ignored."""
        stderr = b"warning: something\n" + line(**GOOD) + b"\nTraceback (most recent call last):\n"
        assert read_repairs(stderr) == (Repair(3, "Balance", "1242914", "12429.14", "decimal point"),)

    def test_malformed_claims_are_skipped(self) -> None:
        """Bad JSON, wrong types, negative or boolean rows and missing fields never become repairs."""
        bad = [b"sandloop-repair {not json", line(**{**GOOD, "row": -1}), line(**{**GOOD, "row": True}),
               line(**{**GOOD, "row": "3"}), line(**{**GOOD, "before": 5}), line(row=1),
               b"sandloop-repair [1, 2]", b'sandloop-repair {"row": 1, "nested": {"a": [1]}}']
        assert read_repairs(b"\n".join(bad)) == ()

    def test_long_lines_and_too_many_claims_are_bounded(self) -> None:
        """A line over the limit is refused unread; at most MAX_REPAIRS claims are kept."""
        long = line(**{**GOOD, "column": "x" * MAX_LINE_BYTES})
        assert read_repairs(long) == ()
        many = b"\n".join(line(**{**GOOD, "row": i}) for i in range(MAX_REPAIRS + 50))
        assert len(read_repairs(many)) == MAX_REPAIRS

    def test_text_is_made_printable_and_short(self) -> None:
        """Control characters and long texts from the sandbox are neutralised."""
        (repair,) = read_repairs(line(**{**GOOD, "column": "Bal\x1b[31mance\n" + "y" * 200}))
        assert "\x1b" not in repair.column and "\n" not in repair.column and len(repair.column) <= 80


class TestConfirms:
    """confirms: a claim is a repair the runtime makes, or it counts for nothing."""

    def test_rules_that_keep_the_digits(self) -> None:
        """Decimal point, sign and parenthesis move no digit; letters become the digits they look like."""
        assert confirms("decimal point", "45,56021 Cr", "45560.21 Cr")
        assert confirms("sign", "724.03", "-724.03")
        assert confirms("parenthesis", "(724.03", "(724.03)")
        assert confirms("letters", "S,234.56", "5,234.56")
        assert confirms("letters", "Rs. 1,2O0.00", "1,200.00")

    def test_changed_digits_or_unknown_rules_are_refused(self) -> None:
        """A claim that changes a digit, adds none for letters, or names another rule is unconfirmed."""
        assert not confirms("decimal point", "1242914", "12429.15")
        assert not confirms("letters", "1234.56", "1234.56")
        assert not confirms("guess", "1242914", "12429.14")
        assert not confirms("sign", "", "-")
        (claim,) = read_repairs(line(**{**GOOD, "after": "99999.99"}))
        assert not claim.confirmed and "unconfirmed" in claim.describe()


class TestCoverageWithRepairs:
    """verify: a repaired row is matched by its other figure; an unconfirmed claim is not."""

    TEXT = ("Opening balance 1,000.00\n01/08/2024 Coffee 3.50 996.50\n02/08/2024 Salary 505.00 1,S01.50\n"
            "03/08/2024 Rent 100.00 1,401.50\n")

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"Date": ["2024-08-01", "2024-08-02", "2024-08-03"],
                             "Description": ["Coffee", "Salary", "Rent"],
                             "Debit": [3.5, None, 100.0], "Credit": [None, 505.0, None],
                             "Balance": [996.5, 1501.5, 1401.5]})

    def test_repaired_row_is_covered(self) -> None:
        """The PDF line still shows 1,S01.50; with the repair confirmed, every check holds."""
        facts = read_facts([(1, self.TEXT)])
        assert verify(self.frame(), facts).self_consistent is False
        repair = Repair(1, "Balance", "1,S01.50", "1,501.50", "letters")
        result = verify(self.frame(), facts, [repair])
        assert result.self_consistent, result.report()
        assert "repaired: 1 cell(s)" in result.summary()
        assert "[repair] row 1 Balance: 1,S01.50 -> 1,501.50 (letters)" in result.report()
        assert result.record()["repairs"] == [{**repair.record()}]

    def test_unconfirmed_claims_do_not_cover(self) -> None:
        """A claim the host cannot confirm is listed but does not help the coverage check."""
        facts = read_facts([(1, self.TEXT)])
        claim = Repair(1, "Balance", "1,S01.50", "1,501.50", "letters", confirmed=False)
        result = verify(self.frame(), facts, [claim])
        assert not result.self_consistent
        assert "repaired" not in result.summary() and "unconfirmed" in result.report()

    def test_a_line_whose_ocr_lost_the_point_is_covered(self) -> None:
        """The analysis's OCR read "215 Dr" where the parser read 2.15 (scan-corvid, issue 15):
        the line shows the balance and the amount's digits, and matches that row."""
        text = ("Opening balance 6,427.59\n03-07-2024 034484 Insurance 215 Dr 6,425.44\n"
                "04-07-2024 Salary 100.00 Cr 6,525.44\n")
        frame = pd.DataFrame({"Date": ["2024-07-03", "2024-07-04"], "Amount": [-2.15, 100.0],
                              "Balance": [6425.44, 6525.44]})
        assert verify(frame, read_facts([(1, text)])).self_consistent
        wrong = frame.assign(Amount=[-2.16, 100.0], Balance=[6425.43, 6525.43])
        coverage = {c.name: c.state for c in verify(wrong, read_facts([(1, text)])).checks}["coverage"]
        assert coverage == "failed"


class TestOcrCost:
    """read_ocr_cost: the parser's OCR time, numbers only."""

    def test_reads_the_last_line(self) -> None:
        """The last marked line counts; the description gives seconds a page."""
        stderr = (b'sandloop-ocr {"pages": 1, "page_reads": 1, "ocr_seconds": 1, "rereads": 0, "reread_seconds": 0}\n'
                  b'sandloop-ocr {"pages": 2, "page_reads": 4, "ocr_seconds": 9.5, "rereads": 3, '
                  b'"reread_seconds": 0.9}\n')
        cost = read_ocr_cost(stderr)
        assert cost == OcrCost(2, 4, 9.5, 3, 0.9)
        assert cost.describe() == "OCR 4 page read(s) in 9.5 s (2.4 s a page), 3 cell(s) read again in 0.9 s"

    def test_reads_the_peak_memory_when_said(self) -> None:
        """The peak memory (issue 35) is read and shown; a bad one counts as not said."""
        line = (b'sandloop-ocr {"pages": 3, "page_reads": 3, "ocr_seconds": 9, "rereads": 0, "reread_seconds": 0, '
                b'"peak_mib": 251.4, "rss_mib": 139.2}')
        cost = read_ocr_cost(line)
        assert cost is not None and (cost.peak_mib, cost.rss_mib) == (251.4, 139.2)
        assert cost.describe().endswith("(3.0 s a page), peak memory 251 MiB")
        assert OcrCost.from_record(cost.record()) == cost
        bad = read_ocr_cost(line.replace(b"251.4", b"true"))
        assert bad is not None and bad.peak_mib == 0.0 and "peak" not in bad.describe()

    def test_the_summary_keeps_it_and_shows_it_after_the_checks(self) -> None:
        """summary.json carries the numbers with the seconds a page; the closing block a line."""
        record = OcrCost(2, 4, 9.5, 3, 0.9).record()
        assert record["seconds_per_page"] == 2.375 and record["page_reads"] == 4
        summary = ParserRunSummary(run_id="r", agent="bank_parser", target="scan-x", status="passed", attempts=1,
                                   max_attempts=3, parser_path="p", run_dir="d", wall_seconds=1.0,
                                   sandbox_seconds=1.0, coder="offline", checks="6 of 6 hold", ocr=record)
        lines = summary.lines()
        at = next(i for i, line in enumerate(lines) if line.startswith("  checks"))
        assert lines[at + 1] == ("  ocr           2 page(s), 4 page read(s) in 9.5 s (2.4 s a page), "
                                 "3 cell(s) read again in 0.9 s")
        assert summary.to_json()["ocr"] == record
        assert not [line for line in replace(summary, ocr={}).lines() if line.startswith("  ocr")]

    def test_anything_else_is_ignored(self) -> None:
        """No line, bad JSON, text or negative numbers, booleans: no cost."""
        for bad in (b"", b"sandloop-ocr {", b'sandloop-ocr {"pages": "1"}', b'sandloop-ocr {"pages": -1, '
                    b'"page_reads": 1, "ocr_seconds": 1, "rereads": 0, "reread_seconds": 0}',
                    b'sandloop-ocr {"pages": true, "page_reads": 1, "ocr_seconds": 1, "rereads": 0, '
                    b'"reread_seconds": 0}'):
            assert read_ocr_cost(bad) is None, bad


class TestFuzzedInputs:
    """The fuzzer's own inputs for a parser's stderr, with a small budget."""

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(STDERR_INPUTS)
    def test_any_stderr_keeps_the_contract(self, raw: bytes) -> None:
        """Whatever the bytes: bounded, printable repairs and a cost or none; never an exception."""
        check_parser_stderr(raw)
