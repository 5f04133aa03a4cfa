"""Issue 15 on the host, no Docker: PDFs to refuse, the CSV-less coder, scans and the output schema."""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pdfplumber
import pytest

from agents.bank_parser.coders._preview import FULL, Previewer
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.graph import route_after_compare
from agents.bank_parser.output_schema import OutputSchema
from agents.bank_parser.statement_pdf import scanned_limits
from agents.bank_parser.verify import Check, Verification
from agents.ports.errors import TargetError
from agents.ports.sandbox import SandboxLimits
from agents.targets import TargetConfig
from tests.corpus.cases import WITHHELD, _bank, write_hostile, write_nocsv, write_scanned
from tests.doubles.inprocess_statement import analyze_here as analyze
from tests.host import missing

SEED = 7


@pytest.fixture
def tesseract() -> None:
    """OCR in this process (the probe's code, not a sandbox) needs the host's Tesseract."""
    if shutil.which("tesseract") is None:
        missing("tesseract, not installed on this host (Debian: apt-get install tesseract-ocr)")


needs_tesseract = pytest.mark.usefixtures("tesseract")


class TestRefusals:
    """PDFs no parser can be written for: one clear TargetError (exit 2), no traceback."""

    @pytest.mark.parametrize(("name", "words"), [
        ("locked", "is password-protected"),
        ("empty", "lists no transactions"),
        ("letter", "does not look like a bank statement"),
    ])
    def test_one_clear_line(self, tmp_path: Path, name: str, words: str) -> None:
        """Each hostile case raises TargetError naming the problem, with a hint."""
        folder = write_hostile(tmp_path, name)
        with pytest.raises(TargetError) as caught:
            analyze(folder / "statement.pdf", None)
        assert words in str(caught.value) and "\n" not in str(caught.value)
        assert caught.value.exit_code == 2


class TestWithoutCsv:
    """The offline coder aims for the output schema and ranks plans by self-consistency."""

    @pytest.mark.parametrize("bank", ["dunmore", "glenrock", "larkspur"])
    def test_first_candidate_is_self_consistent(self, tmp_path: Path, bank: str) -> None:
        """On the analysed pages the best plan's rows chain, and are the statement's transactions."""
        folder = write_nocsv(tmp_path, _bank(bank), SEED)
        analysis = replace(analyze(folder / "statement.pdf", None), schema=OutputSchema())
        best = OfflineCoder().candidates(analysis)[0]
        assert best.preview.verdict == FULL, best.plan.label
        rows = Previewer(analysis).rows(best.plan)
        withheld = pd.read_csv(folder / WITHHELD)
        balances = [float(r["Balance"]) for r in rows]
        assert list(rows[0]) == ["Date", "Description", "Debit", "Credit", "Balance"]
        assert balances == withheld["Balance"].head(len(balances)).tolist()

    def test_signed_schema_and_date_format(self, tmp_path: Path) -> None:
        """A signed schema gives one Amount column; dates are written in the schema's format."""
        folder = write_nocsv(tmp_path, _bank("glenrock"), SEED)
        schema = OutputSchema(amounts="signed", date_format="%d/%m/%Y", amount="Betrag")
        analysis = replace(analyze(folder / "statement.pdf", None), schema=schema)
        rows = Previewer(analysis).rows(OfflineCoder().candidates(analysis)[0].plan)
        withheld = pd.read_csv(folder / WITHHELD)
        assert list(rows[0]) == ["Date", "Description", "Betrag", "Balance"]
        assert float(rows[0]["Betrag"]) == withheld["Amount"].iloc[0]
        assert rows[0]["Date"] == pd.to_datetime(withheld["Date"].iloc[0], format="%d.%m.%Y").strftime("%d/%m/%Y")

    def test_target_toml_names_the_schema(self) -> None:
        """An [output] table in target.toml validates; a date format without a day is refused."""
        config = TargetConfig.model_validate(tomllib.loads('[output]\namounts = "signed"\ndate = "Txn Date"\n'))
        assert config.output is not None
        assert OutputSchema.model_validate(config.output).columns()[0] == ("Txn Date", "date")
        with pytest.raises(ValueError, match="date_format"):
            OutputSchema(date_format="%Y")


class TestLlmPrompt:
    """An LLM coder without result.csv is told the schema and how the run is judged."""

    def test_prompt_names_schema_and_checks(self) -> None:
        """The expected-output part lists the schema's columns and the self-consistency rule."""
        from agents.bank_parser.coders.llm_prompts import describe_expected

        text = describe_expected(None, OutputSchema(amounts="signed"))
        assert "`Amount` (amount)" in text and "self-consistent" in text and "%Y-%m-%d" in text


class TestRouting:
    """Without result.csv the graph retries a parser that is not self-consistent."""

    def test_inconsistent_frame_is_refined(self) -> None:
        """A failed check sends the loop to refine while attempts remain, else finalize."""
        bad = Verification((Check("rows", "held"), Check("running balance", "failed")))
        state = {"comparison": None, "verification": bad, "attempt": 1}
        assert route_after_compare(state, 3) == "refine"  # type: ignore[arg-type]
        assert route_after_compare({**state, "attempt": 3}, 3) == "finalize"  # type: ignore[arg-type]


class TestScans:
    """Scanned statements made from the corpus's text PDFs."""

    def test_scan_has_no_text_layer_and_is_deterministic(self, tmp_path: Path) -> None:
        """The scan is images only, and the same seed writes the same bytes."""
        one = write_scanned(tmp_path / "a", "dunmore", 6, SEED) / "statement.pdf"
        two = write_scanned(tmp_path / "b", "dunmore", 6, SEED) / "statement.pdf"
        assert one.read_bytes() == two.read_bytes()
        with pdfplumber.open(one) as pdf:
            assert pdf.pages[0].extract_words() == [] and pdf.pages[0].images

    def test_scanned_parsers_get_more_time(self) -> None:
        """A scanned analysis raises the sandbox timeout by page; a text one keeps it."""
        limits = SandboxLimits()
        assert scanned_limits(limits, type("A", (), {"scanned": True, "page_count": 2})()).timeout_seconds > 120
        assert scanned_limits(limits, type("A", (), {"scanned": False})()) is limits

    @needs_tesseract
    def test_ocr_analysis_finds_the_table(self, tmp_path: Path) -> None:
        """OCR words of a scan give the coder an OCR plan whose preview chains and fits the CSV."""
        folder = write_scanned(tmp_path, "dunmore", 8, SEED)
        analysis = analyze(folder / "statement.pdf", folder / "result.csv")
        best = OfflineCoder().candidates(analysis)[0]
        assert analysis.scanned and best.plan.strategy == "ocr_words"
        assert best.preview.verdict == FULL, best.preview
