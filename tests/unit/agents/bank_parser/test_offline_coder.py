"""The offline coder: plans from the real ICICI analysis, readable code, refine order.

Generated code is only parsed with ``ast`` here, never executed: running parsers is the
sandbox's job (the integration tests and the agent loop do that).
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import shutil
import sys
from pathlib import Path

import pytest

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders._plan import (
    DateRule,
    NumberFormat,
    choose_date_rule,
    detect_numbers,
    name_similarity,
    parse_number,
)
from agents.bank_parser.coders.base import (
    CoderExhausted,
    FailureKind,
    Feedback,
    GeneratedCode,
)
from agents.bank_parser.coders.offline import Candidate, OfflineCoder, mismatch_hint
from tests.doubles.inprocess_statement import analyze_here as analyze

DATA = Path(__file__).resolve().parents[4] / "data" / "icici"
PDF = DATA / "icici sample.pdf"
CSV = DATA / "result.csv"
COLUMNS = ["Date", "Description", "Debit Amt", "Credit Amt", "Balance"]
ALLOWED_THIRD_PARTY = {"pandas", "pdfplumber"}


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return analyze(PDF, CSV)


@pytest.fixture(scope="module")
def candidates(analysis: Analysis) -> list[Candidate]:
    return OfflineCoder().candidates(analysis)


def feedback(answer: GeneratedCode, attempt: int, kind: FailureKind, detail: str) -> Feedback:
    return Feedback(attempt, kind, detail.splitlines()[0], detail, answer.code, answer.strategy)


def shape_report(expected_rows: int, got_rows: int) -> str:
    """A diff report in the compare step's words."""
    return (
        f"result: FAIL: shape ({got_rows}, 5) != expected ({expected_rows}, 5)\n"
        f"shape: expected ({expected_rows}, 5), got ({got_rows}, 5)"
    )


CELL_REPORT = (
    "result: FAIL: 3 cell(s) differ\n"
    "shape: expected (100, 5), got (100, 5)\n"
    "first mismatching cells (3 in all):\n"
    "  row 4, 'Description': expected 'a b' (str), got 'a' (str)"
)


class TestPlan:
    """What the coder derives from the ICICI analysis."""

    def test_first_candidate_reads_the_ruled_table(self, candidates: list[Candidate]) -> None:
        """The header sits in a ruled table, so ruled tables are tried first."""
        assert candidates[0].plan.strategy == "ruled_tables"

    @pytest.mark.parametrize("strategy", ["ruled_tables", "word_positions", "aligned_tables"])
    def test_maps_the_five_columns(self, candidates: list[Candidate], strategy: str) -> None:
        """Every strategy maps each expected column to its header label, in CSV order."""
        plan = next(c.plan for c in candidates if c.plan.strategy == strategy)
        assert [c.name for c in plan.columns] == COLUMNS
        assert [plan.header_labels[c.source] for c in plan.columns] == COLUMNS
        assert [c.kind for c in plan.columns] == ["date", "text", "number", "number", "number"]
        assert [c.dtype for c in plan.columns] == ["str", "str", "float64", "float64", "float64"]

    def test_dates_are_kept_as_printed(self, candidates: list[Candidate]) -> None:
        """The CSV holds dates as the PDF prints them (01-08-2024), so no conversion."""
        date = candidates[0].plan.columns[0].date
        assert date == DateRule("%d-%m-%Y", "%d-%m-%Y")

    def test_rows_need_a_date_and_a_balance(self, candidates: list[Candidate]) -> None:
        """Columns filled in every sample row are required; debit/credit may be empty."""
        assert candidates[0].plan.required == ("Date", "Balance")

    def test_candidates_cover_three_extractions(self, candidates: list[Candidate]) -> None:
        """Ruled tables, word positions and aligned tables each yield a candidate."""
        assert {c.plan.strategy for c in candidates} == {
            "ruled_tables",
            "word_positions",
            "aligned_tables",
        }

    def test_without_expected_csv_columns_come_from_the_header(self, analysis: Analysis) -> None:
        """No result.csv: header labels become columns, numbers float64, the rest str."""
        plan = OfflineCoder().candidates(dataclasses.replace(analysis, expected=None))[0].plan
        assert [c.name for c in plan.columns] == COLUMNS
        assert [c.dtype for c in plan.columns] == ["str", "str", "float64", "float64", "float64"]


class TestGeneratedCode:
    """The source every candidate emits."""

    def test_every_candidate_parses_and_defines_parse(self, candidates: list[Candidate]) -> None:
        """Each candidate is valid Python with a top-level parse(pdf_path)."""
        for candidate in candidates:
            tree = ast.parse(candidate.code)
            parse = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "parse"]
            assert len(parse) == 1, candidate.plan.label
            assert [a.arg for a in parse[0].args.args] == ["pdf_path"]

    def test_imports_only_stdlib_pdfplumber_and_pandas(self, candidates: list[Candidate]) -> None:
        """Nothing outside the sandbox image's libraries is imported."""
        allowed = set(sys.stdlib_module_names) | ALLOWED_THIRD_PARTY
        for candidate in candidates:
            modules = {
                name.split(".")[0]
                for node in ast.walk(ast.parse(candidate.code))
                for name in _imported(node)
            }
            assert modules <= allowed, modules - allowed

    def test_starts_with_a_config_block(self, candidates: list[Candidate]) -> None:
        """The column mapping and normalisation rules are literals in CONFIG, before any function."""
        tree = ast.parse(candidates[0].code)
        first_def = next(i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef))
        (config,) = [n for n in tree.body[:first_def] if isinstance(n, ast.Assign)
                     and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["CONFIG"]]
        assert isinstance(config.value, ast.Call)
        keywords = {k.arg: k.value for k in config.value.keywords}
        assert {"header_labels", "columns", "dtypes", "required", "date_formats"} <= set(keywords)
        assert all(isinstance(ast.literal_eval(v), (str, int, float, bool, list, dict, type(None)))
                   for v in keywords.values())

    def test_code_is_identical_for_the_same_analysis(self, analysis: Analysis) -> None:
        """Generation is deterministic, so a rerun proposes the same parser."""
        assert OfflineCoder().generate(analysis) == OfflineCoder().generate(analysis)

    def test_names_no_bank(self, candidates: list[Candidate]) -> None:
        """No bank or letterhead name reaches the code."""
        for candidate in candidates:
            lowered = candidate.code.lower()
            assert "icici" not in lowered
            assert "karbon" not in lowered

    def test_renaming_the_files_changes_nothing(
        self, candidates: list[Candidate], tmp_path: Path
    ) -> None:
        """The code depends on the statement's content, not on its file names."""
        pdf, expected = tmp_path / "statement.pdf", tmp_path / "expected.csv"
        shutil.copy(PDF, pdf)
        shutil.copy(CSV, expected)
        renamed = OfflineCoder().candidates(analyze(pdf, expected))
        assert [c.code for c in renamed] == [c.code for c in candidates]

    def test_contains_no_value_of_the_expected_csv(self, candidates: list[Candidate]) -> None:
        """No cell of result.csv (dates, descriptions, amounts) is embedded in the code."""
        with CSV.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))[1:]
        values = {cell for row in rows for cell in row if cell}
        for candidate in candidates:
            leaked = {v for v in values if v in candidate.code}
            assert not leaked, (candidate.plan.label, sorted(leaked)[:5])


class TestRefine:
    """How refine walks the candidates after failures."""

    def test_generate_returns_the_first_candidate(
        self, analysis: Analysis, candidates: list[Candidate]
    ) -> None:
        """generate gives the best-ranked candidate, named by its strategy label."""
        answer = OfflineCoder().generate(analysis)
        assert answer.code == candidates[0].code
        assert answer.strategy == "ruled_tables/strict/drop-summaries/drop"

    def test_never_repeats_and_ends_exhausted(
        self, analysis: Analysis, candidates: list[Candidate]
    ) -> None:
        """Refining after each failure yields every candidate once, then CoderExhausted."""
        coder = OfflineCoder()
        answer, history = coder.generate(analysis), []
        seen = [answer.code]
        kinds = [FailureKind.MISMATCH, FailureKind.EXECUTION_ERROR, FailureKind.TIMEOUT]
        while True:
            kind = kinds[len(history) % len(kinds)]
            history.append(feedback(answer, len(history) + 1, kind, shape_report(100, 90)))
            try:
                answer = coder.refine(analysis, history)
            except CoderExhausted:
                break
            assert answer.code not in seen
            seen.append(answer.code)
        assert len(seen) == len(candidates)

    def test_crash_switches_extraction(self, analysis: Analysis) -> None:
        """An execution error in ruled tables is followed by another extraction."""
        coder = OfflineCoder()
        first = coder.generate(analysis)
        history = [feedback(first, 1, FailureKind.EXECUTION_ERROR, "KeyError: 'x'")]
        assert not coder.refine(analysis, history).strategy.startswith("ruled_tables")

    def test_repeated_crashes_try_every_extraction_first(self, analysis: Analysis) -> None:
        """After crashes, strategies that never crashed come before variants of those that did."""
        coder = OfflineCoder()
        answer, history, tried = coder.generate(analysis), [], []
        for attempt in range(1, 4):
            tried.append(answer.strategy.split("/")[0])
            history.append(feedback(answer, attempt, FailureKind.EXECUTION_ERROR, "boom"))
            answer = coder.refine(analysis, history)
        assert sorted(tried) == ["aligned_tables", "ruled_tables", "word_positions"]

    def test_too_few_rows_relaxes_the_row_filter(self, analysis: Analysis) -> None:
        """A mismatch with fewer rows than expected tries the lenient filter, same extraction."""
        coder = OfflineCoder()
        first = coder.generate(analysis)
        history = [feedback(first, 1, FailureKind.MISMATCH, shape_report(100, 90))]
        assert coder.refine(analysis, history).strategy == "ruled_tables/lenient/drop-summaries/drop"

    def test_wrong_cells_keep_the_extraction_and_the_rows(self, analysis: Analysis) -> None:
        """Same shape but wrong cells tries another continuation or boundary rule first."""
        coder = OfflineCoder()
        first = coder.generate(analysis)
        history = [feedback(first, 1, FailureKind.MISMATCH, CELL_REPORT)]
        assert coder.refine(analysis, history).strategy == "ruled_tables/strict/drop-summaries/merge"

    def test_refine_without_history_skips_the_first_candidate(
        self, analysis: Analysis, candidates: list[Candidate]
    ) -> None:
        """An empty history still never hands back what generate gave."""
        assert OfflineCoder().refine(analysis, []).code == candidates[1].code

    def test_generate_without_any_header_is_exhausted(self, analysis: Analysis) -> None:
        """No expected CSV and no header found: there is nothing to build on."""
        blank = [dataclasses.replace(p, tables=[], words=[]) for p in analysis.pages]
        with pytest.raises(CoderExhausted):
            OfflineCoder().generate(dataclasses.replace(analysis, pages=blank, expected=None))


class TestMismatchHint:
    """Reading the compare step's diff report."""

    @pytest.mark.parametrize(
        ("detail", "hint"),
        [
            (shape_report(100, 0), "no_rows"),
            (shape_report(100, 88), "fewer_rows"),
            (shape_report(100, 104), "more_rows"),
            (CELL_REPORT, "values"),
            ("dtype of 'Balance': expected float64, got str", "values"),
            ("expected 100 rows, got 12 rows", "fewer_rows"),
            ("something else", "unknown"),
        ],
    )
    def test_hint(self, analysis: Analysis, detail: str, hint: str) -> None:
        """Row counts come first, then cell or dtype complaints."""
        assert mismatch_hint(detail, analysis) == hint


class TestNormalisationRules:
    """The host-side rules that choose the generated parser's normalisation."""

    def test_dates_are_converted_when_the_csv_writes_them_differently(self) -> None:
        """PDF "05 Aug 2024" with CSV "2024-08-05" converts between the two formats."""
        rule = choose_date_rule(["05 Aug 2024", "17 Sep 2024"], ["2024-08-05"])
        assert rule == DateRule("%d %b %Y", "%Y-%m-%d")

    def test_ambiguous_dates_follow_the_samples(self) -> None:
        """12/04/2024 shown as 2024-12-04 means month first: the samples decide, not a default."""
        rule = choose_date_rule(["03/04/2024", "12/04/2024"], ["2024-12-04"])
        assert rule == DateRule("%m/%d/%Y", "%Y-%m-%d")

    @pytest.mark.parametrize(
        ("text", "number"),
        [
            ("1,935.30", 1935.3),
            ("₹ 12,000", 12000.0),
            ("(250.00)", -250.0),
            ("250.00-", -250.0),
            ("1,000.00 Cr", 1000.0),
            ("Balance", None),
            ("", None),
        ],
    )
    def test_amounts(self, text: str, number: float | None) -> None:
        """Separators, currency, parentheses, trailing minus and suffixes are understood."""
        assert parse_number(text) == number

    def test_european_amounts(self) -> None:
        """With a decimal comma, 1.234,56 is one thousand two hundred and something."""
        assert parse_number("1.234,56", NumberFormat(thousands=".", decimal=",")) == 1234.56

    @pytest.mark.parametrize(("cells", "separators"), [
        (["1,935.30", "12.00", "Salary"], (",", ".")),
        (["1.234,56", "12,00 Cr"], (".", ",")),
        (["1 234,56", "3,10"], (".", ",")),
        (["1'234.50", "12.00"], ("'", ".")),
    ])
    def test_number_format_detection(self, cells: list[str], separators: tuple[str, str]) -> None:
        """Thousands and decimal separators are read off the amounts the PDF prints."""
        found = detect_numbers(cells)
        assert (found.thousands, found.decimal) == separators

    def test_dates_without_zero_padding(self) -> None:
        """A CSV writing 5/8/2024 gets a format that writes days and months unpadded."""
        assert choose_date_rule(["Aug 05, 2024"], ["5/8/2024"]) == DateRule("%b %d, %Y", "%-d/%-m/%Y")

    def test_header_synonyms(self) -> None:
        """Common banking synonyms match even when the spelling does not."""
        assert name_similarity("Debit Amt", "Withdrawal Amt") > name_similarity(
            "Debit Amt", "Balance"
        )
        assert name_similarity("Description", "Narration") == 1.0


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []
