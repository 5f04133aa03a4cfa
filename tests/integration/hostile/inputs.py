"""Hostile statement PDFs and result.csv files (issue 23), written byte by byte.

Each is a few MB at most on disk and costs a parser of PDFs far more: a page of hundreds of
thousands of text objects, a content stream that inflates to a GiB, 30,000 pages, a page
tree that contains itself, deep nesting, a broken encryption dictionary. The PDFs are built
here from raw objects (reportlab would refuse most of them).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

MIB = 1024 * 1024


def pdf(objects: list[bytes], *, trailer_extra: bytes = b"") -> bytes:
    """A PDF of ``objects`` (object 1 is the catalog), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, trailer_extra, xref)
    return bytes(out)


def stream(data: bytes, *, compressed: bool = True) -> bytes:
    body = zlib.compress(data, 9) if compressed else data
    flate = b" /Filter /FlateDecode" if compressed else b""
    return b"<< /Length %d%s >>\nstream\n" % (len(body), flate) + body + b"\nendstream"


def one_page(content: bytes) -> bytes:
    """A one-page PDF whose page draws ``content`` (an already built stream object)."""
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        content,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def text_flood(objects: int = 400_000) -> bytes:
    """One page holding ``objects`` tiny text objects (the issue's 12.5 GB case)."""
    ops = b"".join(b"BT /F1 1 Tf %d %d Td (x) Tj ET\n" % (i % 590, i % 830) for i in range(objects))
    return one_page(stream(ops))


def inflate_bomb(gib: float = 1.0) -> bytes:
    """A content stream of a few MB that inflates to ``gib`` GiB of spaces."""
    packer = zlib.compressobj(9)
    chunk = b" " * MIB
    body = b"".join(packer.compress(chunk) for _ in range(int(gib * 1024))) + packer.flush()
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream"
    return one_page(content)


def many_pages(count: int = 30_000) -> bytes:
    """``count`` empty pages (the issue's 42 s and 2.6 GB case)."""
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(count))
    pages = [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"] * count
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count), *pages])


def page_tree_loop() -> bytes:
    """A page tree whose node lists itself as its own kid."""
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"])


def deep_nesting(depth: int = 100_000) -> bytes:
    """A page whose resources nest arrays ``depth`` levels deep."""
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources " + b"[" * depth
                + b"]" * depth + b" >>"])


def broken_encryption() -> bytes:
    """A trailer that names an encryption dictionary with nonsense in it."""
    doc = one_page(stream(b"BT /F1 12 Tf 72 700 Td (01-08-2024 Salary 1,200.00) Tj ET"))
    return doc.replace(b"/Root 1 0 R", b"/Root 1 0 R /Encrypt << /Filter /Standard /V 99 /R 99 /O (x) /U (y) /P -1 >>"
                       b" /ID [<00> <00>]", 1)


def malformed_font() -> bytes:
    """Text in a TrueType font whose embedded program is garbage, whose widths are nonsense and
    whose ToUnicode map claims a range of four billion codes (a CPU and memory trap for a CMap reader)."""
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        stream(b"BT /F1 12 Tf 72 700 Td (01-08-2024 Salary 1,200.00) Tj ET"),
        b"<< /Type /Font /Subtype /TrueType /BaseFont /Broken /FirstChar 4294967295 /LastChar -7 "
        b"/Widths [1 (x) << >> -1e308] /FontDescriptor 6 0 R /ToUnicode 8 0 R >>",
        b"<< /Type /FontDescriptor /FontName /Broken /Flags 32 /FontBBox [0 0 1e308 -1e308] /ItalicAngle 0 "
        b"/Ascent 1e308 /Descent -1e308 /CapHeight 0 /StemV 0 /FontFile2 7 0 R >>",
        stream(bytes(range(256)) * 64),
        stream(b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
               b"1 begincodespacerange <00000000> <FFFFFFFF> endcodespacerange\n"
               b"1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange\n"
               b"endcmap CMapName currentdict /CMap defineresource pop end end"),
    ])


def oversized(mb: int) -> bytes:
    """A valid small PDF padded with a comment to ``mb`` MiB."""
    doc = one_page(stream(b"BT /F1 12 Tf 72 700 Td (01-08-2024 Salary 1,200.00) Tj ET"))
    return doc + b"%" + b"x" * (mb * MIB) + b"\n"


HOSTILE_PDFS: dict[str, Callable[[], bytes]] = {
    "text_flood": text_flood,
    "inflate_bomb": inflate_bomb,
    "many_pages": many_pages,
    "page_tree_loop": page_tree_loop,
    "deep_nesting": deep_nesting,
    "broken_encryption": broken_encryption,
    "malformed_font": malformed_font,
}


def csv_lines(header: Iterable[str], rows: int) -> bytes:
    head = ",".join(header).encode()
    return head + b"\n" + b"01-01-2024,x,1.0\n" * rows


def write_target(data: Path, name: str, statement: bytes, result_csv: bytes | None = None) -> Path:
    folder = data / name
    folder.mkdir(parents=True)
    (folder / "statement.pdf").write_bytes(statement)
    if result_csv is not None:
        (folder / "result.csv").write_bytes(result_csv)
    return folder
