"""Read a reference document into plain text: PDF (pdfplumber), plain text or Markdown.

Images are a later step (they need OCR); asking for one is a clear input error, not a crash.
Everything here runs before any container starts, so a bad document costs one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError
from pdfplumber.utils.exceptions import PdfminerException

from agents.ports.errors import TargetError

#: Suffixes the Idris agent reads, and the kind each one is.
DOCUMENT_KINDS = {".pdf": "pdf", ".txt": "text", ".md": "markdown"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".webp")
MAX_TEXT_BYTES = 2 << 20


@dataclass(frozen=True)
class DocumentText:
    """A document's text and where it came from."""

    path: Path
    kind: str
    text: str
    pages: int

    @property
    def lines(self) -> list[str]:
        """The text's lines, as the analysis walks them."""
        return self.text.splitlines()


def load_document(path: Path) -> DocumentText:
    """Read ``path`` as text.

    Raises:
        TargetError: an unsupported kind (images, others), an unreadable or corrupt file,
            or a document with no text at all (a scanned PDF).
    """
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        raise TargetError(
            f"{path.name} is an image; reading images (OCR) is not supported yet",
            hint="provide the document as a PDF with a text layer, or as .txt/.md",
        )
    if suffix not in DOCUMENT_KINDS:
        raise TargetError(f"{path.name}: unsupported document type {suffix or '(none)'}",
                          hint="use a .pdf, .txt or .md file")
    text, pages = _read_pdf(path) if suffix == ".pdf" else (_read_text(path), 1)
    if not text.strip():
        raise TargetError(f"{path.name} has no text to analyse",
                          hint="a scanned PDF needs OCR first; provide a PDF with a text layer")
    return DocumentText(path=path, kind=DOCUMENT_KINDS[suffix], text=text, pages=pages)


def _read_pdf(path: Path) -> tuple[str, int]:
    try:
        with pdfplumber.open(path) as pdf:
            texts = [page.extract_text() or "" for page in pdf.pages]
    except (PdfminerException, PDFSyntaxError, OSError, ValueError, KeyError, TypeError) as exc:
        raise TargetError(f"cannot read {path.name} as a PDF ({type(exc).__name__})",
                          hint="replace it with an intact PDF") from exc
    return "\n".join(texts), len(texts)


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror}") from exc
    if len(data) > MAX_TEXT_BYTES:
        raise TargetError(f"{path.name} is larger than {MAX_TEXT_BYTES >> 20} MiB",
                          hint="a reference document is expected to be a few pages")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TargetError(f"{path.name} is not UTF-8 text", hint="save it as UTF-8") from exc
