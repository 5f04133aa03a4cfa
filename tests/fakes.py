"""Test doubles.

``ScriptedSandbox`` stands in for the Docker backend in *unit* tests of the agent's loop
(routing, attempts, artefacts) so they run without an engine. It never runs a parser: it
replays canned results. The statement probe a run starts with (issue 23) it answers with
the probe's own code on the test's trusted PDF (:func:`probe_result`), as a sandbox would.
The real backend is exercised by tests/integration.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from agents.bank_parser.coders import _ocr_runtime
from agents.pdf_probe import OCR_MODULE, PROBE_CONFIG, analyse
from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec


def frame_document(frame: pd.DataFrame) -> bytes:
    """A sandloop.frame/1 document as the python-parser entrypoint would write it."""
    return json.dumps({
        "schema": "sandloop.frame/1", "status": "ok",
        "columns": list(frame.columns), "dtypes": [str(t) for t in frame.dtypes],
        "index": {"kind": "range", "start": 0, "stop": len(frame), "step": 1},
        "data": [list(row) for row in frame.astype(object).itertuples(index=False, name=None)],
    }, allow_nan=True).encode()


def error_document(error_type: str, message: str) -> bytes:
    """A failure document as the entrypoint writes when parse() raises."""
    return json.dumps({"schema": "sandloop.frame/1", "status": "error", "kind": "execution_error",
                       "error_type": error_type, "message": message, "traceback": "Traceback ..."}).encode()


class ScriptedSandbox:
    """Returns one scripted result.json per run, in order; records the specs it was given."""

    def __init__(self, documents: Sequence[bytes | None], *, timed_out: Sequence[bool] = ()) -> None:
        self.documents = list(documents)
        self.timed_out = list(timed_out)
        self.specs: list[SandboxSpec] = []
        self.probes: list[SandboxSpec] = []

    def run(self, spec: SandboxSpec) -> SandboxResult:
        if PROBE_CONFIG in spec.inputs:
            self.probes.append(spec)
            return probe_result(spec)
        index = len(self.specs)
        self.specs.append(spec)
        document = self.documents[index]
        timed_out = self.timed_out[index] if index < len(self.timed_out) else False
        return SandboxResult(
            exit_code=None if timed_out else 0,
            stdout=CapturedStream(b"", 0), stderr=CapturedStream(b"", 0),
            timed_out=timed_out, oom_killed=False, wall_seconds=0.5,
            files={"result.json": document} if document is not None else {},
        )


def probe_result(spec: SandboxSpec) -> SandboxResult:
    """What a sandbox returns for the statement probe's ``spec``, computed in this process."""
    with tempfile.TemporaryDirectory(prefix="sandloop-probe-") as folder:
        pdf = Path(folder) / "statement.pdf"
        pdf.write_bytes(spec.inputs["statement.pdf"])
        sys.modules.setdefault(OCR_MODULE, _ocr_runtime)
        try:
            answer = {"schema": "sandloop.document/1", "status": "ok",
                      "document": analyse(str(pdf), json.loads(spec.inputs[PROBE_CONFIG]))}
        except Exception as exc:  # noqa: BLE001 - the entrypoint reports whatever the probe raises
            answer = {"schema": "sandloop.frame/1", "status": "error", "error_type": type(exc).__name__}
    raw = json.dumps(answer).encode()
    return SandboxResult(exit_code=0, stdout=CapturedStream(b"", 0), stderr=CapturedStream(b"", 0),
                         timed_out=False, oom_killed=False, wall_seconds=0.1, files={"result.json": raw})


class ProbeSandbox:
    """A test double that answers only the PDF probe, in-process, on the tests' own PDFs."""

    def run(self, spec: SandboxSpec) -> SandboxResult:
        return probe_result(spec)


def pdf_text_here(path: Path) -> tuple[str, int]:
    """A PDF's text as the Idris agent's reader gets it, the probe run in this process."""
    from agents.idris.document_reader import SandboxPdfText  # lazy: only the Idris tests need it
    from agents.ports.config import AnalysisLimits
    from agents.ports.sandbox import SandboxLimits

    return SandboxPdfText(ProbeSandbox(), lambda name: "image", SandboxLimits(), AnalysisLimits(), {})(path)


def load_document_here(path: Path):  # noqa: ANN201 - a DocumentText
    """``load_document`` with the in-process probe (trusted test documents only)."""
    from agents.idris.document import load_document  # lazy: only the Idris tests need it

    return load_document(path, pdf_text_here)


def parser_run_args(settings, run_id: str) -> dict:  # noqa: ANN001 - a Settings of the test's making
    """What ``run_parser_agent`` takes besides the target, sandbox and coder, from test settings
    (the runner derives the same from the agent's plan in a real run)."""
    from agents.bank_parser.output_schema import OutputSchema
    from controller.platform.artefacts import RunArtefacts

    return {"artefacts": RunArtefacts(settings.runs_dir / run_id), "limits": settings.sandbox,
            "max_attempts": settings.max_attempts, "parsers_dir": settings.parsers_dir,
            "output": OutputSchema.model_validate(settings.output)}
