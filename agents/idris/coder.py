"""The coder interface of the Idris agent, and the offline coder.

A coder writes the module from the analysis (``generate``) and repairs it from the
diagnostics of a failed check (``fix``). The offline coder needs no model and no network:

1. ``generate`` renders the ``dependent`` style (:mod:`agents.idris.generator`);
2. ``fix`` first tries the targeted repairs of :mod:`agents.idris.fixer` on the module as
   it is (an import added or dropped, a name qualified or renamed, a cast);
3. when none applies (or it would repeat an earlier module), it regenerates in the next
   style, ``conservative`` then ``runtime``, keeping the imports repairs added; a timeout
   or memory kill goes straight to ``runtime``, which leaves no proof to normalise;
4. when every style has been tried it raises :class:`CoderExhausted`: the loop ends as
   failed instead of checking the same thing twice.

It is stateless: what was tried is read from the history of failed checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agents.idris.diagnostics import Diagnostic, summarize
from agents.idris.fixer import add_import, repair
from agents.idris.generator import STYLE_ORDER, generate_module
from agents.idris.model import DocumentAnalysis

CheckOutcome = Literal["passed", "errors", "timeout", "oom", "crashed"]


@dataclass(frozen=True)
class IdrisCode:
    """A module's source, the style it was written in, and what the last change was."""

    source: str
    style: str
    notes: tuple[str, ...] = ()
    added_imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckFeedback:
    """One failed check, as the next fix sees it."""

    attempt: int
    outcome: CheckOutcome
    summary: str
    diagnostics: tuple[Diagnostic, ...]
    code: IdrisCode
    transcript_tail: str = ""

    @property
    def reason(self) -> str:
        """A bounded label for metrics: the first error's category, else the outcome."""
        if self.outcome == "errors" and self.diagnostics:
            return self.diagnostics[0].category.value
        return self.outcome

    def detail(self) -> str:
        """What a person (or a model) reads about this failure."""
        return summarize(self.diagnostics) or self.summary


class CoderExhausted(Exception):
    """The coder has nothing new to try."""


class IdrisCoder(Protocol):
    """Writes and repairs ``Domains.<Project>`` modules."""

    name: str

    def generate(self, analysis: DocumentAnalysis, project: str) -> IdrisCode:
        """A first module for ``analysis``."""
        ...

    def fix(self, analysis: DocumentAnalysis, project: str, history: Sequence[CheckFeedback]) -> IdrisCode:
        """A different module, given every failed check so far (newest last).

        Raises:
            CoderExhausted: when there is nothing new to try.
        """
        ...


@dataclass
class OfflineIdrisCoder:
    """Rule-based coder: the generator's styles plus the fixer's targeted repairs."""

    name: str = "offline"
    styles: tuple[str, ...] = field(default=STYLE_ORDER)

    def generate(self, analysis: DocumentAnalysis, project: str) -> IdrisCode:
        """The module in the first style."""
        style = self.styles[0]
        return IdrisCode(generate_module(analysis, project, style), style, (f"first draft, style {style}",))

    def fix(self, analysis: DocumentAnalysis, project: str, history: Sequence[CheckFeedback]) -> IdrisCode:
        """A targeted repair of the latest module, else the next style."""
        latest = history[-1]
        seen = {h.code.source for h in history}
        if latest.outcome == "errors":
            repaired = repair(latest.code.source, f"Domains.{project}", latest.diagnostics)
            if repaired is not None and repaired.code not in seen:
                return IdrisCode(repaired.code, latest.code.style, repaired.notes,
                                 latest.code.added_imports + repaired.added_imports)
        return self._restyle(analysis, project, history, seen)

    def _restyle(self, analysis: DocumentAnalysis, project: str, history: Sequence[CheckFeedback],
                 seen: set[str]) -> IdrisCode:
        latest = history[-1]
        for style in self._next_styles(latest):
            source = generate_module(analysis, project, style)
            for module in latest.code.added_imports:
                source = add_import(source, module)
            if source not in seen:
                why = {"timeout": "the check timed out", "oom": "the check ran out of memory",
                       "crashed": "the checker crashed"}.get(latest.outcome, "no targeted repair applies")
                return IdrisCode(source, style, (f"{why}: regenerated in style {style}",), latest.code.added_imports)
        raise CoderExhausted(f"every style ({', '.join(self.styles)}) has been tried; last: {latest.summary}")

    def _next_styles(self, latest: CheckFeedback) -> list[str]:
        current = self.styles.index(latest.code.style) if latest.code.style in self.styles else -1
        later = list(self.styles[current + 1:])
        if latest.outcome in ("timeout", "oom") and "runtime" in later:
            return ["runtime"]  # nothing but run-time checks is left to normalise
        return later
