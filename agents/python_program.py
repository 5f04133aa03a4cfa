"""Programs in the python-parser image: the command its entrypoint runs, and the documents a
probe program returns (shared by agents; issue 23).

The entrypoint imports ``parser.py`` from ``/work/in`` and calls ``parse(pdf)`` (a parser's
frame) or ``sandloop_document(pdf)`` (a probe's document: what a user's file holds, read in
the sandbox so that the controller never parses it). One command for both, so a warm
container started for a run serves either. :func:`read_document` turns a probe's result into
its document, or into the one line that says which bound the user's file broke.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.ports.errors import TargetError
from agents.ports.sandbox import (
    GO_FILE,
    INPUT_DIR,
    OUTPUT_DIR,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
)
from agents.untrusted_text import one_line

IMAGE_NAME = "python-parser"
PARSER_FILE = "parser.py"
PDF_FILE = "statement.pdf"
RESULT_FILE = "result.json"
DOCUMENT_SCHEMA = "sandloop.document/1"
_ARGS = (f"{INPUT_DIR}/{PARSER_FILE}", f"{INPUT_DIR}/{PDF_FILE}", f"{OUTPUT_DIR}/{RESULT_FILE}")
COMMAND = ("python3", "-I", "/opt/sandloop/entrypoint.py", *_ARGS)
#: The same, started early in a warm container: imports first, then waits for GO_FILE.
WARM_COMMAND = ("python3", "-I", "/opt/sandloop/entrypoint.py", "--wait-for", GO_FILE, *_ARGS)


def program_spec(
    image: str, inputs: dict[str, bytes], limits: SandboxLimits, labels: dict[str, str]
) -> SandboxSpec:
    """The spec of one run of the entrypoint on ``inputs`` (``parser.py`` is the program)."""
    return SandboxSpec(image=image, command=COMMAND, inputs=inputs, collect=(RESULT_FILE,), limits=limits,
                       labels=labels, warm_command=WARM_COMMAND)


def read_document(name: str, result: SandboxResult, limits: SandboxLimits, bounds: JSONBounds, *,
                  timeout_setting: str, hint: str, kind: str = "file", claim: str = "what it claims to be") -> Any:
    """The document a probe returned for the user's file ``name`` (a ``kind``, e.g. PDF).

    Raises:
        TargetError: the probe ran out of memory or time, raised, or returned no document:
            one line naming the bound (and the setting that raises it), exit 2.
    """
    if result.oom_killed:
        raise TargetError(f"{name}: analysis needed more than {limits.memory_mb} MiB (a {kind} this complex cannot "
                          f"be {claim}; raise SBX_ANALYSIS__MEMORY_MB to try anyway)", hint=hint)
    if result.timed_out:
        raise TargetError(f"{name}: analysis took more than {limits.timeout_seconds:g} s (raise {timeout_setting} "
                          "to try anyway)", hint=hint)
    raw = result.files.get(RESULT_FILE)
    if raw is None:
        why = result.refused_files.get(RESULT_FILE) or f"no summary (exit {result.exit_code})"
        raise TargetError(f"{name}: the analysis returned {one_line(why, 200)}", hint=hint)
    try:
        document = loads_bounded(raw, bounds)
    except BoundedJSONError as exc:
        raise TargetError(f"{name}: the analysis summary was refused: {exc}", hint=hint) from exc
    if isinstance(document, dict) and document.get("status") == "error":
        raise TargetError(f"{name} is not a readable {kind} ({_error_type(document)})", hint=hint)
    if not isinstance(document, dict) or document.get("schema") != DOCUMENT_SCHEMA:
        raise TargetError(f"{name}: the analysis summary is not a {DOCUMENT_SCHEMA} document", hint=hint)
    return document.get("document")


def _error_type(document: dict[str, Any]) -> str:
    value = document.get("error_type")
    return one_line(value, 80) if isinstance(value, str) and value else "unknown error"


def pdf_refusal(name: str, raw: Any, max_pages: int, hint: str, kind: str = "a statement") -> TargetError:
    """The one line for a refusal the PDF probe returned (``agents/pdf_probe.py``)."""
    refusal = raw if isinstance(raw, dict) else {}
    pages = refusal.get("pages")
    if refusal.get("kind") == "encrypted":
        return TargetError(f"{name} is password-protected", hint="save an unprotected copy (e.g. qpdf "
                           "--decrypt --password=... in.pdf out.pdf) and use that")
    if refusal.get("kind") == "too_many_pages" and isinstance(pages, int):
        return TargetError(f"{name}: {pages} pages, more than the {max_pages} {kind} may have (raise "
                           "SBX_ANALYSIS__MAX_PAGES to try anyway)", hint=hint)
    return TargetError(f"{name}: the analysis refused it for no stated reason", hint=hint)


def check_pdf_size(pdf: Path, size: int, max_mb: int, hint: str, kind: str = "a statement") -> None:
    """Refuse a PDF (``kind``) larger than ``max_mb`` in one line naming the setting."""
    if size > max_mb * 1024 * 1024:
        raise TargetError(f"{pdf.name}: {size / 1048576:.1f} MiB, larger than the {max_mb} MiB {kind} may "
                          "be (raise SBX_ANALYSIS__MAX_PDF_MB to try anyway)", hint=hint)


def read_capped_pdf(pdf: Path, max_mb: int, hint: str, kind: str = "a statement") -> bytes:
    """The PDF's bytes, refused unread when larger than ``max_mb``."""
    try:
        check_pdf_size(pdf, pdf.stat().st_size, max_mb, hint, kind)
        return pdf.read_bytes()
    except OSError as exc:
        raise TargetError(f"cannot read {pdf}: {exc.strerror}") from exc
