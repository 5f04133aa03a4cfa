"""The coder interface: whatever writes parser code (offline rules or an LLM) looks like this.

A coder gets the :class:`~agents.bank_parser.analysis.Analysis` and, on a retry, the
feedback of every earlier attempt, and returns Python source that defines
``parse(pdf_path: str) -> pandas.DataFrame``. It never runs that code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from agents.bank_parser.analysis import Analysis


class FailureKind(StrEnum):
    """Why an attempt failed; bounded, so it can label metrics and choose a refine strategy."""

    EXECUTION_ERROR = "execution_error"  # the parser raised
    TYPE_ERROR = "type_error"  # no parse(), or it returned something that is not a DataFrame
    TIMEOUT = "timeout"
    OOM = "oom"
    MISMATCH = "mismatch"  # ran fine, but the DataFrame differs from the expected one
    NO_CODE = "no_code"  # the coder produced nothing usable
    LLM_ERROR = "llm_error"


@dataclass(frozen=True)
class Feedback:
    """What went wrong with one attempt, as the next attempt's coder sees it."""

    attempt: int
    kind: FailureKind
    summary: str
    detail: str
    code: str
    strategy: str


@dataclass(frozen=True)
class GeneratedCode:
    """A coder's answer: the parser's source and a short name for the approach it took."""

    code: str
    strategy: str
    notes: str = ""
    artefacts: Mapping[str, str] = field(default_factory=dict)
    """Files to keep with the attempt (e.g. an LLM coder's prompt.md, reply.md, llm.json)."""


class CoderExhausted(Exception):
    """The coder has no new idea left; the loop ends as failed instead of repeating itself."""


class CoderFailed(Exception):
    """This attempt produced no runnable code (no code in the reply, the model failed).

    Unlike :class:`CoderExhausted` the loop goes on: the attempt counts as failed with
    ``kind`` (``no_code`` or ``llm_error``), becomes feedback, and the next attempt refines.
    """

    def __init__(
        self,
        kind: FailureKind,
        summary: str,
        *,
        detail: str = "",
        code: str = "",
        strategy: str = "",
        artefacts: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{kind.value}: {summary}")
        self.kind = kind
        self.summary = summary
        self.detail = detail
        self.code = code
        self.strategy = strategy
        self.artefacts: Mapping[str, str] = artefacts or {}


class Coder(Protocol):
    """Writes parser source code from an analysis and the failures so far."""

    name: str

    def generate(self, analysis: Analysis) -> GeneratedCode:
        """Return a first parser for ``analysis``.

        Raises:
            CoderExhausted: when there is nothing to try at all.
            CoderFailed: when this attempt yielded no usable code (the loop goes on).
        """
        ...

    def refine(self, analysis: Analysis, history: Sequence[Feedback]) -> GeneratedCode:
        """Return a different parser, given every earlier attempt's feedback (newest last).

        Raises:
            CoderExhausted: when there is nothing new to try.
            CoderFailed: when this attempt yielded no usable code (the loop goes on).
        """
        ...
