"""The words the offline analysis recognises, in Korean and English, and the Idris names
they become. Matching is on a label with its parenthetical removed (``부가가치세(10%)`` →
``부가가치세``), case-insensitive, first entry wins: order matters where one word contains
another (``소계`` before ``합계``, ``계약금액`` before ``계약금``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One recognised label: the identifier it becomes, its role, and the words for it."""

    ident: str
    role: str
    words: tuple[str, ...]


AMOUNTS = (
    Term("vat", "vat", ("부가가치세", "부가세", "세액", "vat", "tax")),
    Term("supplyAmount", "supply", ("공급가액", "공급가", "공급금액", "소계", "supply amount", "subtotal",
                                    "sub-total", "net amount")),
    Term("totalAmount", "total", ("합계금액", "합계", "총액", "총 계약금액", "총계약금액", "계약금액", "총금액",
                                  "청구금액", "grand total", "total amount", "total", "amount due")),
    Term("advancePayment", "advance", ("선급금", "선금", "착수금", "계약금", "advance payment", "advance",
                                       "deposit", "down payment")),
    Term("interimPayment", "interim", ("중도금", "interim payment")),
    Term("balancePayment", "balance", ("잔금", "잔액", "잔여금", "balance", "final payment")),
)

DATES = (
    Term("signedOn", "signed", ("계약일", "계약체결일", "체결일", "계약 일자", "contract date", "date of contract",
                                "signed on", "signed")),
    Term("issuedOn", "issued", ("발행일", "발급일", "작성일자", "작성일", "issue date", "invoice date",
                                "date of issue", "issued on", "date")),
    Term("draftedOn", "drafted", ("기안일", "drafted on", "draft date")),
    Term("dueOn", "due", ("지급기한", "납부기한", "결제기한", "지급일", "만기일", "due date", "payment due", "due")),
    Term("plannedOn", "planned", ("집행 예정일", "집행예정일", "예정일", "집행일", "planned date", "planned")),
    Term("deliveredOn", "delivered", ("납품일", "납기일", "납기", "delivery date")),
)
#: Date roles that open a document's timeline: every other date should come after them.
OPENING_DATE_ROLES = ("signed", "issued", "drafted")

PERIODS = (
    Term("contractPeriod", "period", ("계약기간", "계약 기간", "용역기간", "용역 기간", "기간", "contract period",
                                      "service period", "period", "term")),
)

TEXTS = (
    Term("contractNo", "id", ("계약번호", "contract no", "contract number")),
    Term("documentNo", "id", ("문서번호", "document no", "document number")),
    Term("invoiceNo", "id", ("invoice no", "invoice number", "계산서 번호", "승인번호", "송장번호")),
    Term("title", "title", ("용역명", "계약명", "건명", "제목", "사업명", "과제명", "project", "title", "subject")),
    Term("purpose", "text", ("목적", "사유", "purpose", "reason")),
    Term("approvalLine", "text", ("결재", "결재라인", "approval line")),
    Term("paymentTerms", "text", ("지급조건", "지급 조건", "payment terms")),
)

PARTIES = (
    Term("client", "Client", ("갑", "발주자", "발주처", "위탁자", "도급인", "client")),
    Term("contractor", "Contractor", ("을", "수급자", "수급인", "수탁자", "contractor", "service provider",
                                      "provider", "vendor")),
    Term("supplier", "Supplier", ("공급자", "seller", "supplier", "from")),
    Term("recipient", "Recipient", ("공급받는자", "공급받는 자", "buyer", "bill to", "customer", "recipient")),
    Term("drafter", "Drafter", ("기안자", "작성자", "drafter", "prepared by")),
    Term("approver", "Approver", ("결재자", "승인자", "approver", "approved by")),
    Term("witness", "Witness", ("병", "입회인", "witness")),
)

PARTY_DETAILS = (
    Term("partyName", "name", ("상호", "회사명", "법인명", "업체명", "성명", "이름", "name", "company")),
    Term("registrationNo", "id", ("사업자등록번호", "등록번호", "사업자번호", "registration no", "registration number",
                                  "business no", "tax id")),
    Term("representative", "person", ("대표자", "대표이사", "대표", "representative", "ceo")),
    Term("address", "text", ("주소", "소재지", "address")),
    Term("phone", "text", ("전화번호", "전화", "연락처", "phone", "tel")),
    Term("department", "text", ("부서", "소속", "department", "team")),
)

#: Words that head a table's header row or its subtotal row (not line items themselves).
TABLE_WORDS = ("항목", "품목", "내역", "소계", "합계", "description", "item", "subtotal", "total")

_PAREN = re.compile(r"\s*[\(（\[].*?[\)）\]]\s*")
_QUOTES = "\"'“”‘’「」『』*_` "


def plain_label(label: str) -> str:
    """``부가가치세(10%)`` → ``부가가치세``; ``**Subtotal**`` → ``subtotal``."""
    return _PAREN.sub(" ", label).strip(_QUOTES).strip().lower()


def match_term(label: str, terms: tuple[Term, ...], *, exact: bool = False) -> Term | None:
    """The first term whose word the label starts with (or equals, with ``exact``)."""
    plain = plain_label(label)
    for term in terms:
        for word in term.words:
            if plain == word or (not exact and _starts_with_word(plain, word)):
                return term
    return None


def _starts_with_word(plain: str, word: str) -> bool:
    if not plain.startswith(word):
        return False
    rest = plain[len(word):]
    return not rest or not (word.isascii() and rest[0].isalnum())
