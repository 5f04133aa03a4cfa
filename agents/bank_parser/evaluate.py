"""Run one parser in the python-parser sandbox and judge it: the core of execute and compare.

Shared by the agent's graph and by ``controller check``, so that a generated parser and a
hand-written one are held to exactly the same test.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from agents.bank_parser.coders.base import FailureKind
from agents.bank_parser.compare import Comparison, compare_frames
from agents.bank_parser.frame_codec import ParserFailure, ResultFormatError, decode_result
from agents.ports.sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    limits_hit,
    naming_limits,
)
from agents.python_program import (  # re-exported: the parser agent's names for its image and files
    COMMAND as COMMAND,
)
from agents.python_program import IMAGE_NAME as IMAGE_NAME
from agents.python_program import PARSER_FILE as PARSER_FILE
from agents.python_program import PDF_FILE as PDF_FILE
from agents.python_program import RESULT_FILE as RESULT_FILE
from agents.python_program import WARM_COMMAND as WARM_COMMAND
from agents.python_program import program_spec
from agents.untrusted_text import one_line, printable

#: The entrypoint's exit status when it cannot write the result (see entrypoint.py).
ENTRYPOINT_UNWRITABLE = 3


@dataclass(frozen=True)
class Execution:
    """A parser's run in the sandbox: the raw result, and the frame or why there is none."""

    sandbox: SandboxResult
    frame: pd.DataFrame | None
    failure: FailureKind | None
    message: str
    detail: str
    #: Every limit the execution hit, named with its size (``; ``-separated; "" for none). The
    #: message ends with the ones it does not already name, so the outcome line of ``run``
    #: and ``check`` names them all (output cut, time, memory, processes, files).
    limits: str = ""

    def __checkpoint__(self) -> tuple[object, dict[str, object]]:
        """How a checkpoint stores this: without the DataFrame, which is decoded again from
        the sandbox's raw result on restore (see controller.platform.checkpoints)."""
        return restore_execution, {"sandbox": self.sandbox, "failure": self.failure,
                                   "message": self.message, "detail": self.detail, "limits": self.limits}


def restore_execution(*, sandbox: SandboxResult, failure: FailureKind | None, message: str, detail: str,
                      limits: str = "") -> Execution:
    """An :class:`Execution` read back from a checkpoint: the frame decoded again from result.json."""
    frame = None
    if failure is None and RESULT_FILE in sandbox.files:
        decoded = decode_result(sandbox.files[RESULT_FILE])
        frame = None if isinstance(decoded, ParserFailure) else decoded
    return Execution(sandbox, frame, failure, message, detail, limits)


def parser_spec(
    image: str, code: str, pdf: bytes, limits: SandboxLimits, labels: dict[str, str]
) -> SandboxSpec:
    """The sandbox spec for running ``code`` on ``pdf``: only these two files go in."""
    return program_spec(image, {PARSER_FILE: code.encode("utf-8"), PDF_FILE: pdf}, limits, labels)


def execute_parser(sandbox: Sandbox, spec: SandboxSpec) -> Execution:
    """Run the spec and classify the outcome (frame, parser error, contract error, limits); every
    limit it hit is named in its message (:attr:`Execution.limits`)."""
    result = sandbox.run(spec)
    hit = limits_hit(result, spec.limits)
    execution = _classify(result, spec)
    if not hit:
        return execution
    named = "time" if execution.failure == FailureKind.TIMEOUT else \
        "memory" if execution.failure == FailureKind.OOM else None  # its message names that one already
    message = naming_limits(execution.message, result, spec.limits, named=named)
    return replace(execution, message=one_line(message, 2000), limits="; ".join(hit.values()))


def _classify(result: SandboxResult, spec: SandboxSpec) -> Execution:
    if result.timed_out:
        return _failed(result, FailureKind.TIMEOUT, f"killed at the {spec.limits.timeout_seconds:g} s timeout")
    if result.oom_killed:
        return _failed(result, FailureKind.OOM, f"killed at the {spec.limits.memory_mb} MiB memory limit")
    raw = result.files.get(RESULT_FILE)
    if _area_full(result, raw):
        return _failed(result, FailureKind.EXECUTION_ERROR,
                       f"output area full ({spec.limits.output_area_mb} MiB): the parser filled /work, so its "
                       "result could not be written whole (SBX_SANDBOX__OUTPUT_AREA_MB)")
    if raw is None:
        why = "result.json was too large" if RESULT_FILE in result.truncated_files else "no result.json"
        return _failed(result, FailureKind.EXECUTION_ERROR, f"{why} (exit {result.exit_code})")
    try:
        decoded = decode_result(raw)
    except ResultFormatError as exc:
        return _failed(result, FailureKind.TYPE_ERROR, one_line(str(exc)))
    except Exception as exc:  # noqa: BLE001 - a decoder bug on hostile bytes is the attempt's failure, not a crash
        return _failed(result, FailureKind.TYPE_ERROR, f"result.json could not be decoded ({type(exc).__name__})")
    if isinstance(decoded, ParserFailure):
        kind = FailureKind(decoded.kind)
        return _failed(result, kind, f"{decoded.error_type}: {decoded.message}", decoded.traceback)
    return Execution(result, decoded, None, f"returned {len(decoded)} rows x {decoded.shape[1]} columns", "")


def _area_full(result: SandboxResult, raw: bytes | None) -> bool:
    """Whether the entrypoint could not write the result because /work was full (ENOSPC)."""
    if raw is not None and result.exit_code != ENTRYPOINT_UNWRITABLE:
        return False
    return b"No space left on device" in result.stderr.data or b"[Errno 28]" in result.stderr.data


def _failed(result: SandboxResult, kind: FailureKind, message: str, detail: str = "") -> Execution:
    return Execution(result, None, kind, one_line(message, 2000), printable(detail or result.stderr.text, 4000))


def judge(execution: Execution, expected_csv: Path | None) -> Comparison | None:
    """Compare the execution's frame with the expected CSV; None when there is nothing to compare."""
    if execution.frame is None or expected_csv is None:
        return None
    return compare_frames(execution.frame, pd.read_csv(expected_csv))
