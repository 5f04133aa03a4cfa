"""Read a reference PDF's text in a sandbox (issue 23): the Idris agent never parses a user's
PDF in the controller. The shared PDF probe (``agents/pdf_probe.py``) runs in the python-parser
image with the analysis caps (``SBX_ANALYSIS__*``) and returns every page's text as bounded
JSON; each bound the PDF breaks is one line naming its setting (exit 2)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents import pdf_probe
from agents.bounded_json import JSONBounds
from agents.ports.config import AnalysisLimits
from agents.ports.errors import TargetError
from agents.ports.sandbox import Sandbox, SandboxLimits
from agents.python_program import (
    IMAGE_NAME,
    PARSER_FILE,
    PDF_FILE,
    pdf_refusal,
    program_spec,
    read_capped_pdf,
    read_document,
)

HINT = "replace it with an intact PDF with a text layer, or give the document as .txt/.md"
#: Depth: document > texts > [page, text].
TEXT_BOUNDS = JSONBounds(max_bytes=16 * 1024 * 1024, max_depth=4, max_values=300_000)
_PROBE_SOURCE = inspect.getsource(pdf_probe).encode("utf-8")


class _Texts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    page_count: int = Field(ge=0)
    pages: list[object] = Field(max_length=0)
    texts: list[tuple[int, str]] = Field(max_length=100_000)
    scanned: bool


@dataclass(frozen=True)
class SandboxPdfText:
    """Reads a PDF's text in sandboxes of the python-parser image (made sure of through
    ``image_of`` on the first PDF only) within ``caps``."""

    sandbox: Sandbox
    image_of: Callable[[str], str]
    limits: SandboxLimits
    caps: AnalysisLimits
    labels: Mapping[str, str]

    def __call__(self, path: Path) -> tuple[str, int]:
        """The text of every page and the page count.

        Raises:
            TargetError: over a cap, password-protected, unreadable: one line.
        """
        pdf = read_capped_pdf(path, self.caps.max_pdf_mb, HINT, "a document")
        limits = self.limits.model_copy(update={"memory_mb": self.caps.memory_mb,
                                                "timeout_seconds": self.caps.timeout_seconds})
        config = {"max_pages": self.caps.max_pages, "analysed_pages": 0, "ocr": False}
        inputs = {PARSER_FILE: _PROBE_SOURCE, PDF_FILE: pdf, pdf_probe.PROBE_CONFIG: json.dumps(config).encode()}
        image = self.image_of(IMAGE_NAME)
        result = self.sandbox.run(program_spec(image, inputs, limits, dict(self.labels)))
        body = read_document(path.name, result, limits, TEXT_BOUNDS, hint=HINT, kind="PDF",
                             timeout_setting="SBX_ANALYSIS__TIMEOUT_SECONDS", claim="a reference document")
        if isinstance(body, dict) and "refusal" in body:
            raise pdf_refusal(path.name, body["refusal"], self.caps.max_pages, HINT, kind="a document")
        try:
            texts = _Texts.model_validate(body)
        except ValidationError as exc:
            raise TargetError(f"{path.name}: the analysis returned a malformed summary",
                              hint="report this: the PDF probe and its decoder disagree") from exc
        return "\n".join(text for _, text in texts.texts), texts.page_count
