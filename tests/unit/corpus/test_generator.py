"""The synthetic corpus generator: deterministic, real PDFs, CSVs that match, every layout covered."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pdfplumber
import pytest

from tests.corpus.generate import CSV_NAME, PDF_NAME, generate
from tests.corpus.ledger import make_statement
from tests.corpus.render import MARGIN, PANEL_GAP, format_date, money, page_size
from tests.corpus.specs import BANKS, OUTSIDE, bank

SOME = ["corvid", "fernhill", "harbourline"]


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class TestDeterminism:
    """The same seed writes the same bytes; another seed writes another statement."""

    def test_same_seed_same_bytes(self, tmp_path: Path) -> None:
        """Two generations with seed 7 are byte-identical, PDFs included."""
        generate(tmp_path / "a", 7, SOME)
        generate(tmp_path / "b", 7, SOME)
        assert files(tmp_path / "a") == files(tmp_path / "b")

    def test_other_seed_other_statement(self, tmp_path: Path) -> None:
        """Seed 8 gives different transactions."""
        generate(tmp_path / "a", 7, ["corvid"])
        generate(tmp_path / "b", 8, ["corvid"])
        assert (tmp_path / "a/corvid" / CSV_NAME).read_bytes() != (tmp_path / "b/corvid" / CSV_NAME).read_bytes()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(out, 7)
    return out


class TestFiles:
    """What a bank folder holds."""

    def test_one_folder_per_bank(self, corpus: Path) -> None:
        """At least eight banks, each a target folder with one PDF and result.csv."""
        folders = sorted(p.name for p in corpus.iterdir())
        assert folders == sorted(s.name for s in BANKS) and len(folders) >= 8
        for name in folders:
            assert sorted(p.name for p in (corpus / name).iterdir()) == [CSV_NAME, PDF_NAME]

    @pytest.mark.parametrize("spec", BANKS, ids=[s.name for s in BANKS])
    def test_pdf_has_a_text_layer_with_the_transactions(self, corpus: Path, spec) -> None:  # noqa: ANN001
        """The first and last transactions' dates are in the PDF's text, on the first and last page."""
        txns = make_statement(spec, 7).transactions
        with pdfplumber.open(corpus / spec.name / PDF_NAME) as pdf:
            first, last = pdf.pages[0].extract_text(), pdf.pages[-1].extract_text()
            pages = len(pdf.pages)
        assert format_date(txns[0].date, spec.pdf_date) in first
        assert format_date(txns[-1].date, spec.pdf_date) in last
        assert pages >= (8 if spec.rows >= 300 else 2)

    @pytest.mark.parametrize("spec", BANKS, ids=[s.name for s in BANKS])
    def test_csv_has_a_row_per_transaction(self, corpus: Path, spec) -> None:  # noqa: ANN001
        """One row per transaction (plus opening/closing rows where the CSV keeps them), the spec's columns."""
        frame = pd.read_csv(corpus / spec.name / CSV_NAME)
        extra = 2 if spec.keeps_balance_rows else 0
        assert len(frame) == spec.rows + extra
        assert list(frame.columns) == [name for name, _ in spec.csv]

    def test_references_stay_strings(self, corpus: Path) -> None:
        """Mixed references read back as text, zero padding kept."""
        refs = pd.read_csv(corpus / "corvid" / CSV_NAME)["Reference"]
        assert str(refs.dtype) in {"str", "object"} and refs.iloc[0].startswith("0")


class TestSpecs:
    """The specs cover every layout feature the issue lists."""

    def test_columns_fit_the_page(self) -> None:
        """No table is wider than the page between its margins."""
        for spec in BANKS + OUTSIDE:
            table = sum(c.width for c in spec.columns)
            assert spec.panels * table + (spec.panels - 1) * PANEL_GAP <= page_size(spec)[0] - 2 * MARGIN, spec.name

    def test_every_feature_is_covered(self) -> None:
        """Ruled and borderless, headers, balance rows, wraps, dates, amounts, order, refs, length."""
        has = lambda predicate: any(predicate(s) for s in BANKS)  # noqa: E731
        assert has(lambda s: s.ruled) and has(lambda s: not s.ruled)
        assert has(lambda s: s.shaded_header)
        assert has(lambda s: s.header_every_page) and has(lambda s: not s.header_every_page)
        assert has(lambda s: s.footer and s.running_head)
        assert has(lambda s: s.opening_row != "none") and has(lambda s: s.closing_row != "none")
        assert has(lambda s: s.carried_forward != "none") and has(lambda s: s.totals)
        assert has(lambda s: s.keeps_balance_rows)
        assert has(lambda s: s.wrap_lines >= 2) and has(lambda s: s.wrap_lines >= 3)
        assert has(lambda s: s.pdf_date == s.csv_date) and has(lambda s: s.pdf_date != s.csv_date)
        assert has(lambda s: "%b" in s.pdf_date) and has(lambda s: "%y" in s.pdf_date)
        assert has(lambda s: "%-d" in s.csv_date)
        assert {s.amount_style for s in BANKS} == {"split", "signed", "marker", "suffix"}
        assert has(lambda s: s.negative == "parens") and has(lambda s: s.currency)
        assert has(lambda s: s.thousands) and has(lambda s: s.balance_suffix)
        assert has(lambda s: "amount" in dict(s.csv).values() and s.amount_style == "split")
        assert has(lambda s: "debit" in dict(s.csv).values() and s.amount_style != "split")
        assert has(lambda s: [f for _, f in s.csv if f in s.pdf_fields] !=
                   [f for f in s.pdf_fields if f in dict(s.csv).values()])
        assert has(lambda s: any(c.field == f and c.label.replace("\n", " ") != n
                                 for n, f in s.csv for c in s.columns))
        assert has(lambda s: any("\n" in c.label for c in s.columns))
        assert has(lambda s: "ref" in dict(s.csv).values() and s.ref_style == "mixed")
        assert has(lambda s: s.rows >= 300)
        assert has(lambda s: s.grouping == "indian") and has(lambda s: s.negative == "trailing")
        assert has(lambda s: s.decimal_comma and s.thousands_space) and has(lambda s: s.landscape)
        assert has(lambda s: s.periods > 1) and has(lambda s: s.suffixes[0] == "DR")
        assert has(lambda s: s.decimals == 0)
        assert has(lambda s: s.column_rules and s.opening_in_header and s.opening_row == "none")
        assert len(BANKS) >= 8

    def test_a_column_ruled_table_has_vertical_rules_only(self, tmp_path: Path) -> None:
        """quillon (issue 35): vertical lines and no horizontal one; the opening balance above the table."""
        generate(tmp_path, 7, ["quillon"])
        with pdfplumber.open(tmp_path / "quillon" / "statement.pdf") as pdf:
            page = pdf.pages[0]
            assert page.lines and all(abs(ln["x0"] - ln["x1"]) < 0.5 for ln in page.lines)
            text = page.extract_text()
        block, table = text.split("Date Transaction Details", 1)
        assert "Opening balance:" in block and "Opening" not in table

    def test_two_tables_side_by_side_read_down_then_across(self, tmp_path: Path) -> None:
        """tamsin (issue 35): two headers on a line; the left table holds the earlier rows, then the
        right; the balance goes from CR to DR."""
        generate(tmp_path, 7, ["tamsin"])
        frame = pd.read_csv(tmp_path / "tamsin" / CSV_NAME)
        with pdfplumber.open(tmp_path / "tamsin" / PDF_NAME) as pdf:
            page = pdf.pages[0]
            middle = MARGIN + sum(c.width for c in bank("tamsin").columns) + PANEL_GAP / 2  # between the tables
            left = page.crop((0, 0, middle, page.height)).extract_text().splitlines()
            right = page.crop((middle, 0, page.width, page.height)).extract_text().splitlines()
        assert page.extract_text().count("Date Details Amount Balance") == 2
        dates = [line.split()[0] for line in left + right if line[:2].isdigit() and line[2] == "/"]
        expected = [d[:6] + d[8:] for d in frame["Date"]]
        assert dates == expected[: len(dates)] and len(dates) > 40
        assert (frame["Balance"] > 0).any() and (frame["Balance"] < 0).any()
        assert any(line.endswith(" DR") for line in right) and any(line.endswith(" CR") for line in left)

    def test_amounts_print_as_the_spec_says(self) -> None:
        """Indian lakh groups, trailing minus, space-grouped decimal commas, parentheses."""
        base = bank("aldermoor")
        indian = dataclasses.replace(base, grouping="indian", negative="trailing")
        assert money(12345678901, indian, negative=True) == "12,34,56,789.01-"
        assert (money(99999, indian), money(100000, indian)) == ("999.99", "1,000.00")
        assert money(12345678901, base) == "123,456,789.01"
        spaced = dataclasses.replace(base, decimal_comma=True, thousands_space=True)
        assert money(123456789, spaced) == "1 234 567,89"
        assert money(-5, dataclasses.replace(base, negative="parens", currency="$"), negative=True) == "($0.05)"
        assert money(123456700, dataclasses.replace(base, decimals=0, currency="¥")) == "¥1,234,567"

    def test_two_periods_each_open_with_their_own_letterhead(self, tmp_path: Path) -> None:
        """marlow: page numbering starts again and each period prints its opening balance,
        the second the first's closing one."""
        spec = bank("marlow")
        generate(tmp_path, 7, ["marlow"])
        with pdfplumber.open(tmp_path / "marlow" / PDF_NAME) as pdf:
            texts = [page.extract_text() for page in pdf.pages]
        assert sum("Statement of Account" in t for t in texts) == spec.periods == 2
        assert sum("Page 1 of" in t for t in texts) == 2 and sum("Opening Balance" in t for t in texts) == 2
        assert len(pd.read_csv(tmp_path / "marlow" / CSV_NAME)) == spec.rows


class TestCommandLine:
    """python -m tests.corpus.generate."""

    def test_writes_the_named_bank(self, tmp_path: Path) -> None:
        """--bank limits the output; one line per bank."""
        proc = subprocess.run([sys.executable, "-m", "tests.corpus.generate", "--out", str(tmp_path),
                               "--seed", "3", "--bank", "kestrel"], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("kestrel") and (tmp_path / "kestrel" / PDF_NAME).is_file()
        assert bank("kestrel").layout == "cards"

    def test_unknown_bank_is_one_line(self, tmp_path: Path) -> None:
        """An unknown name is exit 2 and one line naming the banks."""
        proc = subprocess.run([sys.executable, "-m", "tests.corpus.generate", "--out", str(tmp_path),
                               "--bank", "nope"], capture_output=True, text=True, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
        assert "aldermoor" in proc.stderr and not list(tmp_path.iterdir())


class TestIssue24Cases:
    """Cells printed without their decimal point, and a table printed without its header."""

    def test_faded_cells_lose_only_their_point(self, tmp_path: Path) -> None:
        """The chosen Balance and Amount cells print their digits without the point; the CSV keeps the truth."""
        import dataclasses

        from tests.corpus.cases import faded_cells
        from tests.corpus.render import balance_text, render_pdf

        spec = dataclasses.replace(bank("dunmore"), rows=18)
        statement = make_statement(spec, 7)
        faded = faded_cells(statement, spec)
        render_pdf(tmp_path / "s.pdf", statement, spec, faded)
        with pdfplumber.open(tmp_path / "s.pdf") as pdf:
            text = "\n".join(page.extract_text() or "" for page in pdf.pages)
        (row, _), = [cell for cell in faded if cell[1] == "balance"]
        printed = balance_text(statement.transactions[row].balance, spec)
        assert printed not in text and printed.replace(".", "", 1) in text
        assert len(faded) == 2 and {name for _, name in faded} == {"balance", "amount"}  # dunmore: one Amount column

    def test_headerless_table_prints_no_labels(self, tmp_path: Path) -> None:
        """Without its header the table's labels appear nowhere on the page."""
        import dataclasses

        from tests.corpus.render import render_pdf

        spec = dataclasses.replace(bank("brightwater"), rows=24, header=False, shaded_header=False)
        render_pdf(tmp_path / "s.pdf", make_statement(spec, 7), spec)
        with pdfplumber.open(tmp_path / "s.pdf") as pdf:
            words = {w["text"] for w in pdf.pages[0].extract_words()}
        assert "Amount" not in words and "Description" not in words  # "Balance" is in "Opening Balance"


class TestIssue46Cases:
    """Recurring names printed once as OCR misreads them; the CSV keeps the truth."""

    def test_names_case_prints_each_misread_once(self, tmp_path: Path) -> None:
        """Each recurring description is printed right at least twice and misread once; the
        amounts (and so the running balance) are the statement's own."""
        from tests.corpus.cases import CONFUSED, confused_names
        from tests.corpus.render import render_pdf

        spec = dataclasses.replace(bank("brightwater"), rows=24)
        statement = make_statement(spec, 7)
        truth, printed = confused_names(statement)
        render_pdf(tmp_path / "s.pdf", printed, spec)
        with pdfplumber.open(tmp_path / "s.pdf") as pdf:
            text = "\n".join(page.extract_text() or "" for page in pdf.pages)
        for right, misread in CONFUSED:
            assert text.count(right) >= 2 and text.count(misread) == 1, (right, misread)
            assert sum(t.description == right for t in truth.transactions) == text.count(right) + 1
        assert [t.cents for t in truth.transactions] == [t.cents for t in statement.transactions]
        assert sum(t.description in dict(CONFUSED).values() for t in printed.transactions) == len(CONFUSED)

    def test_one_row_is_printed_faint(self, tmp_path: Path) -> None:
        """The faint row's text is grey (FAINT_GREYS["faint"]), every other row's black."""
        from tests.corpus.cases import confused_names, faint_row
        from tests.corpus.render import FAINT_GREYS, format_date, render_pdf

        spec = dataclasses.replace(bank("brightwater"), rows=24)
        _truth, printed = confused_names(make_statement(spec, 7))
        row = faint_row(printed)
        render_pdf(tmp_path / "s.pdf", printed, spec, frozenset({(row, "faint")}))
        with pdfplumber.open(tmp_path / "s.pdf") as pdf:
            words = pdf.pages[0].extract_words(extra_attrs=["non_stroking_color"])
        grey = {w["text"] for w in words if w["non_stroking_color"] not in ((0,), (0.0,), 0, [0], None)}
        assert format_date(printed.transactions[row].date, spec.pdf_date) in grey
        assert FAINT_GREYS["faint"] > 0.5 and len(grey) <= 12  # one row's words only

    def test_names_case_is_written_with_its_csv(self, tmp_path: Path) -> None:
        """``scan-names-brightwater``: an image-only PDF and the true descriptions in result.csv."""
        from tests.corpus.cases import NAMES, write_scanned

        assert ("brightwater", 24, True, "fainter") in NAMES
        folder = write_scanned(tmp_path, "brightwater", 24, 7, names="faint")
        assert folder.name == "scan-names-brightwater"
        with pdfplumber.open(folder / PDF_NAME) as pdf:
            assert not (pdf.pages[0].extract_text() or "").strip()
        descriptions = pd.read_csv(folder / CSV_NAME)["Description"].tolist()
        assert descriptions.count("UPI Payment J Iqbal") == 3 and "UP1 Payment J Iqba1" not in descriptions
