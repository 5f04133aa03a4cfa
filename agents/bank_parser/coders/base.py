"""The coder interface: whatever writes parser code (offline rules or an LLM) looks like this.

A coder gets the :class:`~agents.bank_parser.analysis.Analysis` and, on a retry, the
feedback of every earlier attempt, and returns Python source that defines
``parse(pdf_path: str) -> pandas.DataFrame``. It never runs that code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


class CoderExhausted(Exception):
    """The coder has no new idea left; the loop ends as failed instead of repeating itself."""


class Coder(Protocol):
    """Writes parser source code from an analysis and the failures so far."""

    name: str

    def generate(self, analysis: Analysis) -> GeneratedCode:
        """Return a first parser for ``analysis``."""
        ...

    def refine(self, analysis: Analysis, history: Sequence[Feedback]) -> GeneratedCode:
        """Return a different parser, given every earlier attempt's feedback (newest last).

        Raises:
            CoderExhausted: when there is nothing new to try.
        """
        ...
