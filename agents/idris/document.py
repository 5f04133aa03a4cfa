"""Read a reference document into plain text: PDF, plain text or Markdown.

A PDF is parsed only in a sandbox (issue 23): :func:`load_document` takes the reader that
does it (``document_reader.SandboxPdfText`` in a run); :func:`check_document` is what the
plan checks before any container starts (kind, size, the PDF header), so a bad document
still costs one line. Text and Markdown are decoded here, within a size cap. Images are a
later step (they need OCR); asking for one is a clear input error, not a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


#: Reads a PDF's text and page count (in a sandbox; a test double in unit tests).
PdfText = Callable[[Path], tuple[str, int]]


def load_document(path: Path, read_pdf: PdfText) -> DocumentText:
    """Read ``path`` as text (a PDF through ``read_pdf``).

    Raises:
        TargetError: an unsupported kind (images, others), an unreadable or corrupt file,
            or a document with no text at all (a scanned PDF).
    """
    suffix = check_document(path)
    text, pages = read_pdf(path) if suffix == ".pdf" else (_read_text(path), 1)
    if not text.strip():
        raise TargetError(f"{path.name} has no text to analyse",
                          hint="a scanned PDF needs OCR first; provide a PDF with a text layer")
    return DocumentText(path=path, kind=DOCUMENT_KINDS[suffix], text=text, pages=pages)


def check_document(path: Path) -> str:
    """The document's suffix, once its kind is supported and a PDF starts like one.

    Raises:
        TargetError: an image, another kind, or a .pdf that is no PDF.
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
    if suffix == ".pdf":
        try:
            with path.open("rb") as handle:
                head = handle.read(1024)
        except OSError as exc:
            raise TargetError(f"cannot read {path}: {exc.strerror}") from exc
        if b"%PDF-" not in head:
            raise TargetError(f"cannot read {path.name} as a PDF (no %PDF- header)",
                              hint="replace it with an intact PDF")
    return suffix


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
