"""The offline analysis on the sample documents: fields, parties, amounts, dates, invariants."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction
from pathlib import Path

import pytest

from agents.idris.analysis import analyze_document, detect_type
from agents.idris.document import DocumentText
from agents.idris.korean_numbers import amount_in_words, parse_korean_number
from agents.idris.report import analysis_markdown
from agents.ports.errors import TargetError
from controller.platform.settings import PROJECT_ROOT
from tests.fakes import load_document_here

CONTRACT = PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"
DOCUMENTS = PROJECT_ROOT / "tests" / "fixtures" / "idris_documents"


def analyse(path: Path, kind: str = "other"):  # noqa: ANN201
    return analyze_document(load_document_here(path), kind)


def text_document(tmp_path: Path, text: str) -> DocumentText:
    path = tmp_path / "doc.txt"
    path.write_text(text, encoding="utf-8")
    return load_document_here(path)


def formulas(analysis) -> set[str]:  # noqa: ANN001
    return {i.formula for i in analysis.invariants}


@pytest.fixture(scope="module")
def analysis():  # noqa: ANN201
    """The sample contract, analysed once."""
    return analyse(CONTRACT, "contract")


class TestServiceContract:
    def test_document_type_and_title(self, analysis):
        """The PDF's Korean text is read; it is a 용역계약서, a contract, in KRW."""
        assert analysis.title == "용역계약서" and analysis.detected_type == "contract"
        assert analysis.currency == "KRW" and analysis.scale == 1 and analysis.kind == "pdf"

    def test_amounts_with_roles_and_stated_rates(self, analysis):
        """Five amounts, named by role, with the rates stated next to them."""
        found = {a.ident: (a.value, a.stated_rate) for a in analysis.amounts}
        assert found == {
            "supplyAmount": (48_000_000, None), "vat": (4_800_000, Fraction(1, 10)),
            "totalAmount": (52_800_000, None), "advancePayment": (15_840_000, Fraction(3, 10)),
            "balancePayment": (36_960_000, Fraction(7, 10)),
        }

    def test_arithmetic_invariants_come_from_the_numbers(self, analysis):
        """total = supply + VAT, VAT = supply × 1/10, the instalments, and nothing spurious."""
        assert {"totalAmount = supplyAmount + vat", "totalAmount = advancePayment + balancePayment",
                "vat = supplyAmount * 1/10", "advancePayment = totalAmount * 3/10",
                "balancePayment = totalAmount * 7/10"} <= formulas(analysis)
        rates = [i for i in analysis.invariants if i.kind == "rate"]
        assert len(rates) == 3  # 15,840,000 / 48,000,000 = 33 % is not a rule

    def test_line_items_and_their_sum(self, analysis):
        """Three rows, each quantity × unit price; together they make the supply amount."""
        assert [(i.description, i.quantity, i.unit_price, i.amount) for i in analysis.items] == [
            ("요구사항 분석", 1, 8_000_000, 8_000_000), ("시스템 설계 및 개발", 4, 9_000_000, 36_000_000),
            ("교육 및 기술지원", 2, 2_000_000, 4_000_000)]
        assert {"lineAmount = unitPrice * quantity", "itemsTotal items = supplyAmount"} <= formulas(analysis)

    def test_dates_periods_and_their_order(self, analysis):
        """The period 2025-03-01..08-31 (start ≤ end, a rule) and the contract date before it."""
        (period,) = analysis.periods
        assert (period.ident, period.start, period.end) == ("contractPeriod", dt.date(2025, 3, 1), dt.date(2025, 8, 31))
        assert [(d.ident, d.value) for d in analysis.dates] == [("signedOn", dt.date(2025, 2, 20))]
        order = {i.formula: i.origin for i in analysis.invariants if i.kind == "order"}
        assert order == {"contractPeriod.start <= contractPeriod.end": "rule",
                         "signedOn <= contractPeriod.start": "observed"}

    def test_parties_with_their_details(self, analysis):
        """갑 and 을 with name, registration number, representative and address; no duplicates."""
        assert [(p.ident, p.role, p.name) for p in analysis.parties] == [
            ("client", "Client", "주식회사 한빛데이터"), ("contractor", "Contractor", "주식회사 바른소프트")]
        assert analysis.parties[0].detail("registrationNo") == "214-86-12345"
        assert analysis.parties[1].detail("representative") == "이서연"

    def test_text_fields_clauses_and_no_warnings(self, analysis):
        """Contract number and title are fields; article sentences are clauses; nothing is wrong."""
        assert [(t.ident, t.value) for t in analysis.text_fields] == [
            ("contractNo", "SC-2025-0142"), ("title", "고객 데이터 분석 시스템 구축")]
        assert any(c.startswith("검수:") for c in analysis.clauses)
        assert analysis.warnings == () and all(i.holds for i in analysis.invariants)

    def test_amount_in_words_is_checked(self, analysis):
        """금 오천이백팔십만원정 is read and agrees with 52,800,000."""
        total = analysis.amount("totalAmount")
        assert total is not None and total.words_value == 52_800_000

    def test_markdown_has_the_seeds_sections(self, analysis):
        """Document type, fields, parties, amounts, dates, invariants, as the seed shows them."""
        text = analysis_markdown(analysis, "ServiceContract")
        for heading in ("# 분석 결과", "## 문서 유형: 용역계약서", "## 주요 필드", "## 당사자", "## 금액",
                        "## 기간 및 날짜", "## 불변식"):
            assert heading in text
        assert "합계금액 = 공급가액 + 부가가치세(10%)" in text and "`Domains.ServiceContract`" in text

    def test_the_pdf_matches_the_tool_that_makes_it(self):
        """Every amount and date of tools/make_sample_contract.py is in the committed PDF."""
        import importlib.util

        spec = importlib.util.spec_from_file_location("maker", PROJECT_ROOT / "tools" / "make_sample_contract.py")
        assert spec and spec.loader
        maker = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(maker)
        text = load_document_here(CONTRACT).text
        lines = [line for _, body in maker.ARTICLES_BEFORE_TABLE + maker.ARTICLES_AFTER_TABLE for line in body]
        lines += maker.CLOSING + [" ".join(cell for cell in row if cell) for row in maker.ITEMS[1:]]
        assert all(line in text for line in lines)


class TestOtherDocuments:
    def test_english_invoice(self):
        """Subtotal/VAT/Total, issue ≤ due date, seller and buyer, three line items."""
        analysis = analyse(DOCUMENTS / "invoice.txt", "invoice")
        assert analysis.detected_type == "invoice" and analysis.currency == "KRW"
        assert {"totalAmount = supplyAmount + vat", "vat = supplyAmount * 1/10", "issuedOn <= dueOn",
                "itemsTotal items = supplyAmount"} <= formulas(analysis)
        assert [p.role for p in analysis.parties] == ["Supplier", "Recipient"]
        assert len(analysis.items) == 3

    def test_korean_approval_form_in_markdown(self):
        """A 품의서: unstated 10 % VAT found from the numbers, a Markdown table read as items."""
        analysis = analyse(DOCUMENTS / "approval.md", "approval")
        assert analysis.detected_type == "approval" and analysis.kind == "markdown"
        vat = next(i for i in analysis.invariants if i.kind == "rate")
        assert (vat.formula, vat.origin) == ("vat = supplyAmount * 1/10", "observed")
        assert [p.role for p in analysis.parties] == ["Drafter"]
        assert [i.quantity for i in analysis.items] == [2, 1]

    def test_cents_are_kept_as_minor_units(self, tmp_path):
        """Amounts with decimals switch the whole analysis to cents."""
        doc = text_document(tmp_path, "INVOICE\nSubtotal: USD 1,200.50\nVAT (10%): USD 120.05\nTotal: USD 1,320.55\n")
        analysis = analyze_document(doc, "invoice")
        assert analysis.scale == 100 and analysis.currency == "USD"
        assert [a.value for a in analysis.amounts] == [120050, 12005, 132055]
        assert "totalAmount = supplyAmount + vat" in formulas(analysis)


class TestBrokenDocuments:
    def test_a_stated_rate_the_numbers_break_is_reported(self, tmp_path):
        """VAT (10%) that is not 10 % of anything: an invariant that does not hold, and a warning."""
        text = "용역계약서\n공급가액: 1,000,000원\n부가가치세(10%): 90,000원\n합계금액: 1,090,000원\n"
        doc = text_document(tmp_path, text)
        analysis = analyze_document(doc, "contract")
        (broken,) = analysis.violated()
        assert broken.kind == "rate" and broken.origin == "stated"
        assert any("breaks its own rule" in w for w in analysis.warnings)

    def test_a_period_ending_before_it_starts_is_reported(self, tmp_path):
        """계약기간 backwards: the rule is kept, marked as broken."""
        doc = text_document(tmp_path, "용역계약서\n계약기간: 2025년 9월 1일부터 2025년 3월 1일까지\n")
        (broken,) = analyze_document(doc, "contract").violated()
        assert broken.formula == "contractPeriod.start <= contractPeriod.end"

    def test_words_that_disagree_with_digits(self, tmp_path):
        """금 오백만원정 next to 5,500,000원 is a warning."""
        doc = text_document(tmp_path, "계약서\n합계금액: 5,500,000원 (금 오백만원정)\n")
        warnings = analyze_document(doc, "contract").warnings
        assert any("in words" in w and "5,000,000" in w for w in warnings)

    def test_rounded_vat_is_a_rounded_rule(self, tmp_path):
        """VAT 10 % of 1,234,567 is 123,456.7: 123,456 is the rule rounded down."""
        doc = text_document(tmp_path, "계약서\n공급가액: 1,234,567원\n부가세(10%): 123,456원\n")
        (rate,) = [i for i in analyze_document(doc, "contract").invariants if i.kind == "rate"]
        assert rate.rounding == "down" and rate.holds


class TestReading:
    def test_images_are_a_later_step(self, tmp_path):
        """An image is refused with one clear line, not a crash."""
        image = tmp_path / "scan.png"
        image.write_bytes(b"\x89PNG\r\n")
        with pytest.raises(TargetError, match="OCR"):
            load_document_here(image)

    def test_a_corrupt_pdf_is_an_input_error(self, tmp_path):
        """A file named .pdf that is not one: TargetError."""
        bad = tmp_path / "bad.pdf"
        bad.write_bytes(b"%PDF-1.4\nnot really")
        with pytest.raises(TargetError):
            load_document_here(bad)

    def test_non_utf8_text_is_an_input_error(self, tmp_path):
        """Text must be UTF-8."""
        bad = tmp_path / "doc.txt"
        bad.write_bytes("계약서".encode("euc-kr"))
        with pytest.raises(TargetError, match="UTF-8"):
            load_document_here(bad)

    @pytest.mark.parametrize(("title", "kind"), [("세금계산서", "invoice"), ("지출 품의서", "approval"),
                                                 ("SERVICE AGREEMENT", "contract"), ("메모", "other")])
    def test_document_types_from_titles(self, title, kind):
        """The title tells the type."""
        assert detect_type(title, title) == kind


class TestKoreanNumbers:
    @pytest.mark.parametrize(("words", "value"), [
        ("오천이백팔십만", 52_800_000), ("일억이천만", 120_000_000), ("십만", 100_000), ("삼백오", 305),
        ("만", 10_000), ("5천2백만", 52_000_000), ("사천팔백만", 48_000_000),
    ])
    def test_words_to_integers(self, words, value):
        """Sino-Korean numerals with 십/백/천 and 만/억."""
        assert parse_korean_number(words) == value

    def test_not_a_number(self):
        """Anything else is None."""
        assert parse_korean_number("오천원두") is None

    def test_the_phrase_in_a_line(self):
        """금 …원정 is found inside a line."""
        assert amount_in_words("52,800,000원 (금 오천이백팔십만원정)") == ("금 오천이백팔십만원정", 52_800_000)
