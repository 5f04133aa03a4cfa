"""The offline coder on every layout of the synthetic corpus, without Docker.

The corpus is generated into a temporary folder (seed 7, the seed ``make eval`` uses) and
analysed like a run would. What each bank's spec says about its layout is checked against
what the coder derives from the PDF and the CSV alone: the extraction, the column mapping
(by content where names differ), the amount model, date conversion, stacked headers,
summary rows and wrapped lines, and that the best candidate's preview on the analysed pages
reproduces the CSV's sample rows. Generated code is only parsed with ``ast`` here; running
parsers is the sandbox's job (tests/integration/agents/test_corpus.py).
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders import _runtime as rt
from agents.bank_parser.coders._plan import ParserPlan
from agents.bank_parser.coders._preview import FULL, Previewer
from agents.bank_parser.coders.base import CoderExhausted, FailureKind, Feedback
from agents.bank_parser.coders.offline import Candidate, OfflineCoder
from tests.corpus.generate import CSV_NAME, PDF_NAME, generate, generate_bank
from tests.corpus.ledger import make_statement
from tests.corpus.render import format_date
from tests.corpus.specs import BANKS, BankSpec, bank
from tests.doubles.inprocess_statement import analyze_here as analyze

SEED = 7
#: The seed whose fernhill samples cannot tell "11" from an unpadded month (all in November).
AMBIGUOUS_SEED = 2
AMOUNT_KINDS = {"split": "split", "signed": "signed", "suffix": "signed", "marker": "marker"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, SEED, [spec.name for spec in BANKS] + ["kestrel"])
    return out


@pytest.fixture(scope="module")
def analyses(corpus: Path) -> dict[str, Analysis]:
    names = [spec.name for spec in BANKS] + ["kestrel"]
    return {name: analyze(corpus / name / PDF_NAME, corpus / name / CSV_NAME) for name in names}


@pytest.fixture(scope="module")
def best(analyses: dict[str, Analysis]) -> dict[str, Candidate]:
    return {name: OfflineCoder().candidates(analysis)[0] for name, analysis in analyses.items()}


def flipped(spec: BankSpec) -> BankSpec:
    """The same statement with a CSV that wants the other amount form (signed <-> separate)."""
    fields = [f for _, f in spec.csv]
    if "amount" in fields:
        csv = [(n, f) for n, f in spec.csv if f != "amount"]
        at = fields.index("amount")
        csv[at:at] = [("Debit", "debit"), ("Credit", "credit")]
    else:
        at = fields.index("debit")
        csv = [(n, f) for n, f in spec.csv if f not in ("debit", "credit")]
        csv.insert(at, ("Amount", "amount"))
    return dataclasses.replace(spec, name=f"{spec.name}-flip", csv=tuple(csv))


TWINS = [flipped(spec) for spec in BANKS]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Candidate]:
    out = tmp_path_factory.mktemp("twins")
    best = {}
    for spec in TWINS:
        folder = generate_bank(out, spec, SEED).folder
        analysis = analyze(folder / PDF_NAME, folder / CSV_NAME)
        best[spec.name] = OfflineCoder().candidates(analysis)[0]
    return best


def position(spec: BankSpec, field: str) -> int:
    return spec.pdf_fields.index(field)  # type: ignore[arg-type]


def expected_source(spec: BankSpec, field: str, plan: ParserPlan) -> set[object]:
    """Where the spec says a CSV field's values are in the PDF (a position or a computed amount)."""
    if field in ("debit", "credit"):  # with printed debit/credit columns, either reads the same
        return {position(spec, field), field} if spec.amount_style == "split" else {field}
    if field == "amount":
        return {"signed"} if spec.amount_style in ("split", "marker") else {position(spec, "amount"), "signed"}
    return {position(spec, field)}


CORPUS = pytest.mark.parametrize("spec", BANKS, ids=[s.name for s in BANKS])


class TestLayouts:
    """What the coder derives for each bank, against what its spec says."""

    @CORPUS
    def test_extraction_follows_the_ruling(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Ruled grids are read as tables; borderless statements by word positions."""
        assert best[spec.name].plan.strategy == ("ruled_tables" if spec.ruled else "word_positions")

    @CORPUS
    def test_preview_reproduces_the_samples(self, spec: BankSpec, best: dict[str, Candidate],
                                            analyses: dict[str, Analysis]) -> None:
        """The best candidate's rows on the analysed pages equal the CSV's first rows (and count)."""
        candidate = best[spec.name]
        assert candidate.preview.verdict == FULL, (candidate.plan.label, candidate.preview)
        rows = Previewer(analyses[spec.name]).rows(candidate.plan)
        assert rows is not None and len(rows) >= len(analyses[spec.name].expected.sample_rows)

    @CORPUS
    def test_columns_map_by_content(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Each CSV column comes from the PDF column (or computed amount) holding its values."""
        plan = best[spec.name].plan
        assert [c.name for c in plan.columns] == [name for name, _ in spec.csv]
        for (name, field), column in zip(spec.csv, plan.columns, strict=True):
            assert column.source in expected_source(spec, field, plan), (name, column.source)

    @CORPUS
    def test_amount_model(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Split columns, a signed column (minus, parentheses, Dr suffix) or a Dr/Cr column."""
        amounts = best[spec.name].plan.amounts
        assert amounts is not None and amounts.kind == AMOUNT_KINDS[spec.amount_style]
        if spec.amount_style == "split":
            assert (amounts.debit, amounts.credit) == (position(spec, "debit"), position(spec, "credit"))
        if spec.amount_style == "marker":
            assert amounts.marker == position(spec, "marker")

    @CORPUS
    def test_dates_become_the_csv_text(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Every transaction's date, as printed, converts to the CSV's text (kept or reformatted)."""
        plan = best[spec.name].plan
        rules = [plan.date_rule(c) for c in plan.columns if c.kind == "date"]
        assert rules and all(rules)
        for txn in make_statement(spec, SEED).transactions:
            printed = format_date(txn.date, spec.pdf_date)
            assert rt.clean_date(printed, (rules[0].pdf_format, rules[0].csv_format)) == \
                format_date(txn.date, spec.csv_date)

    @CORPUS
    def test_header_lines(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Labels stacked over two lines make a two-line header."""
        stacked = any("\n" in c.label for c in spec.columns)
        assert best[spec.name].plan.header_lines == (2 if stacked else 1)

    @CORPUS
    def test_summary_rows_follow_the_csv(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Balance and summary rows are dropped, unless the CSV's samples keep them."""
        assert best[spec.name].plan.summaries == ("keep" if spec.keeps_balance_rows else "drop")

    @CORPUS
    def test_wrapped_descriptions_are_merged(self, spec: BankSpec, best: dict[str, Candidate]) -> None:
        """Borderless statements whose descriptions wrap merge the wrapped lines."""
        wraps = spec.wrap_lines > 1 and not spec.ruled
        assert (best[spec.name].plan.continuation == "merge") == wraps

    @CORPUS
    def test_code_names_no_bank_and_holds_no_csv_text(self, spec: BankSpec, best: dict[str, Candidate],
                                                      corpus: Path) -> None:
        """The parser is derived from the layout: no bank name, no description or date of the CSV."""
        code = best[spec.name].code
        assert spec.title.lower() not in code.lower() and spec.name not in code.lower()
        frame = pd.read_csv(corpus / spec.name / CSV_NAME, dtype=str, keep_default_na=False)
        texts = {v for v in frame.to_numpy().ravel() if len(v) >= 5 and not v.replace(".", "").isdigit()}
        assert not {t for t in texts if t in code}
        ast.parse(code)


class TestOtherAmountForm:
    """Every PDF amount style with the other CSV form: separate columns <-> one signed column."""

    @pytest.mark.parametrize("spec", TWINS, ids=[s.name for s in TWINS])
    def test_maps_and_previews(self, spec: BankSpec, twins: dict[str, Candidate]) -> None:
        """The twin's columns map to the computed or printed amounts and its preview reproduces the samples."""
        candidate = twins[spec.name]
        assert candidate.preview.verdict == FULL, (candidate.plan.label, candidate.preview)
        for (name, field), column in zip(spec.csv, candidate.plan.columns, strict=True):
            assert column.source in expected_source(spec, field, candidate.plan), (name, column.source)


class TestOutsideTheCoder:
    """A layout the coder cannot express still yields code, never an exception."""

    def test_no_table_still_gives_a_parser(self, analyses: dict[str, Analysis]) -> None:
        """Without any header the coder falls back to the CSV's names; the run will fail with a diff."""
        analysis = analyses["kestrel"]
        answer = OfflineCoder().generate(analysis)
        ast.parse(answer.code)
        assert all(c.preview.verdict != FULL for c in OfflineCoder().candidates(analysis))
        assert bank("kestrel").layout == "cards"

    def test_empty_pages_do_not_crash(self, analyses: dict[str, Analysis]) -> None:
        """Blank pages: a fallback parser with a CSV, CoderExhausted without one."""
        analysis = analyses["aldermoor"]
        blank = [dataclasses.replace(p, tables=[], words=[]) for p in analysis.pages]
        assert OfflineCoder().generate(dataclasses.replace(analysis, pages=blank)).code
        with pytest.raises(CoderExhausted):
            OfflineCoder().generate(dataclasses.replace(analysis, pages=blank, expected=None))

    def test_no_pages_do_not_crash(self, analyses: dict[str, Analysis]) -> None:
        """An analysis without pages still gives candidates (the fallback)."""
        analysis = dataclasses.replace(analyses["corvid"], pages=[], page_count=0)
        assert OfflineCoder().candidates(analysis)


class TestRanking:
    """How candidates are ordered and refined on corpus layouts."""

    def test_previewed_candidates_come_first(self, analyses: dict[str, Analysis]) -> None:
        """Candidates are sorted by preview: every fully reproducing one before any other."""
        candidates = OfflineCoder().candidates(analyses["dunmore"])
        verdicts = [c.preview.verdict for c in candidates]
        assert verdicts == sorted(verdicts, reverse=True)

    def test_ambiguous_padding_offers_the_other_date_rule(self, analyses: dict[str, Analysis]) -> None:
        """When samples cannot tell 05/11 from 5/11, a candidate with the other rule exists."""
        candidates = OfflineCoder().candidates(analyses["fernhill"])
        choices = {c.plan.date_choice for c in candidates}
        date_options = max(len(c.dates) for c in candidates[0].plan.columns)
        assert choices == ({0, 1} if date_options > 1 else {0})

    def test_a_date_mismatch_tries_the_other_date_rule(self, tmp_path: Path) -> None:
        """After wrong dates in the sandbox, refine keeps everything but the date rule."""
        folder = generate(tmp_path, AMBIGUOUS_SEED, ["fernhill"])[0].folder
        analysis = analyze(folder / PDF_NAME, folder / CSV_NAME)
        coder = OfflineCoder()
        first = coder.generate(analysis)
        plan = coder.candidates(analysis)[0].plan
        assert max(len(c.dates) for c in plan.columns) > 1  # the seed's samples are ambiguous
        report = ("result: FAIL: 40 cell(s) differ\nshape: expected (90, 6), got (90, 6)\n"
                  "first mismatching cells (40 in all):\n"
                  "  row 69, 'Posting Date': expected '2/1/2024' (str), got '2/01/2024' (str)")
        history = [Feedback(1, FailureKind.MISMATCH, "40 cell(s) differ", report, first.code, first.strategy)]
        retry = next(c.plan for c in coder.candidates(analysis) if c.code == coder.refine(analysis, history).code)
        assert retry.date_choice == 1
        assert dataclasses.replace(retry, date_choice=0) == plan
