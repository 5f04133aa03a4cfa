"""(Re)make the Idris agent's sample document: a Korean service contract as a PDF.

    .venv/bin/python tools/make_sample_contract.py            # writes data/service-contract/
    .venv/bin/python tools/make_sample_contract.py --out x.pdf --font /path/to/Font.ttf

Needs reportlab (a dev dependency) and a Korean TrueType font: Debian's ``fonts-nanum``
(``apt-get install fonts-nanum``) provides NanumGothic, used by default. The font is
embedded (subset) in the PDF, so reading the committed PDF needs no font at all.

The numbers are chosen to carry the invariants the analysis must find: 공급가액 + 부가가치세
= 합계금액, 부가가치세 = 공급가액 × 10 %, the line items sum to 공급가액 and each is quantity ×
unit price, 선급금/잔금 are 30 %/70 % of the total and add up to it, the amount in words
matches the digits, and the contract date precedes the period, whose start precedes its end.
The output is byte-for-byte reproducible (reportlab's invariant mode).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "data" / "service-contract" / "service_contract.pdf"
DEFAULT_FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
FONT = "NanumGothic"

TITLE = "용역계약서"
PREAMBLE = [
    "계약번호: SC-2025-0142",
    '발주자 주식회사 한빛데이터(이하 "갑")와 수급자 주식회사 바른소프트(이하 "을")는 '
    "아래 용역에 관하여 다음과 같이 계약을 체결한다.",
]
PARTIES = [
    ("갑 (발주자)", ["상호: 주식회사 한빛데이터", "사업자등록번호: 214-86-12345", "대표자: 김민준",
                  "주소: 서울특별시 강남구 테헤란로 123"]),
    ("을 (수급자)", ["상호: 주식회사 바른소프트", "사업자등록번호: 105-87-54321", "대표자: 이서연",
                  "주소: 경기도 성남시 분당구 판교역로 45"]),
]
ARTICLES_BEFORE_TABLE = [
    ("제1조 (용역명) 고객 데이터 분석 시스템 구축", []),
    ("제2조 (계약기간) 2025년 3월 1일부터 2025년 8월 31일까지", []),
    ("제3조 (계약금액)", ["공급가액: 48,000,000원", "부가가치세(10%): 4,800,000원",
                      "합계금액: 52,800,000원 (금 오천이백팔십만원정)"]),
    ("제4조 (용역 내역) 세부 내역은 다음과 같다. (단위: 원)", []),
]
ITEMS = [
    ("항목", "수량", "단가", "금액"),
    ("요구사항 분석", "1", "8,000,000", "8,000,000"),
    ("시스템 설계 및 개발", "4", "9,000,000", "36,000,000"),
    ("교육 및 기술지원", "2", "2,000,000", "4,000,000"),
    ("소계", "", "", "48,000,000"),
]
ARTICLES_AFTER_TABLE = [
    ("제5조 (대금 지급)", ["선급금(30%): 15,840,000원 (계약 체결 후 14일 이내 지급)",
                       "잔금(70%): 36,960,000원 (검수 완료 후 30일 이내 지급)"]),
    ("제6조 (검수) 을은 용역 완료 후 결과물을 제출하고, 갑은 제출일로부터 10일 이내에 검수한다.", []),
    ("제7조 (기밀 유지) 양 당사자는 본 계약으로 알게 된 상대방의 정보를 제3자에게 누설하지 아니한다.", []),
]
CLOSING = [
    "계약일: 2025년 2월 20일",
    "갑: 주식회사 한빛데이터 대표이사 김민준 (인)",
    "을: 주식회사 바른소프트 대표이사 이서연 (인)",
]


def main(argv: list[str] | None = None) -> int:
    """Write the sample contract PDF; exit 2 with one line when the font is missing."""
    parser = argparse.ArgumentParser(description="Make the Idris agent's sample service contract PDF.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output PDF (default {DEFAULT_OUT})")
    parser.add_argument("--font", type=Path, default=DEFAULT_FONT, help="a Korean TrueType font")
    args = parser.parse_args(argv)
    if not args.font.is_file():
        print(f"error: no font at {args.font} (install Debian's fonts-nanum: apt-get install fonts-nanum, "
              "or pass --font /path/to/korean.ttf)", file=sys.stderr)
        return 2
    build(args.out, args.font)
    print(f"wrote {args.out}")
    return 0


def build(out: Path, font: Path) -> None:
    """Lay the contract out on A4 and write it to ``out``."""
    rl_config.invariant = 1
    pdfmetrics.registerFont(TTFont(FONT, str(font)))
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = SimpleDocTemplate(str(out), pagesize=A4, leftMargin=22 * mm, rightMargin=22 * mm,
                            topMargin=20 * mm, bottomMargin=20 * mm, title=TITLE,
                            author="sandloop sample", subject="Sample service contract")
    doc.build(_story())


def _story() -> list[object]:
    title = ParagraphStyle("title", fontName=FONT, fontSize=20, leading=28, alignment=1, spaceAfter=10)
    body = ParagraphStyle("body", fontName=FONT, fontSize=10.5, leading=16, wordWrap="CJK")
    item = ParagraphStyle("item", parent=body, leftIndent=12)
    story: list[object] = [Paragraph(TITLE, title)]
    story += [Paragraph(line, body) for line in PREAMBLE] + [Spacer(1, 6)]
    for header, details in PARTIES:
        story += [Paragraph(header, body)] + [Paragraph(line, item) for line in details]
    story.append(Spacer(1, 6))
    story += _articles(ARTICLES_BEFORE_TABLE, body, item)
    story += [_items_table(), Spacer(1, 6)]
    story += _articles(ARTICLES_AFTER_TABLE, body, item)
    story += [Spacer(1, 12)] + [Paragraph(line, body) for line in CLOSING]
    return story


def _articles(articles: list[tuple[str, list[str]]], body: ParagraphStyle, item: ParagraphStyle) -> list[object]:
    flow: list[object] = []
    for heading, lines in articles:
        flow.append(Paragraph(heading, body))
        flow += [Paragraph(line, item) for line in lines]
    return flow


def _items_table() -> Table:
    table = Table(ITEMS, colWidths=[70 * mm, 18 * mm, 32 * mm, 36 * mm], hAlign="LEFT")
    table.setStyle(TableStyle([
        ("FONT", (0, 0), (-1, -1), FONT, 10),
        ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
        ("BACKGROUND", (0, 0), (-1, 0), colors.whitesmoke),
        ("ALIGN", (1, 1), (-1, -1), "RIGHT"),
    ]))
    return table


if __name__ == "__main__":
    raise SystemExit(main())
