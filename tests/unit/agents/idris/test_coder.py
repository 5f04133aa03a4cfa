"""The offline coder: targeted repairs first, then the next style, then it gives up."""

from __future__ import annotations

import pytest

from agents.idris.analysis import analyze_document
from agents.idris.coder import CheckFeedback, CoderExhausted, IdrisCode, OfflineIdrisCoder
from agents.idris.diagnostics import parse_transcript
from controller.platform.settings import PROJECT_ROOT
from tests.fakes import load_document_here
from tests.unit.agents.idris.fakes import transcript

CONTRACT = PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"
PROJECT = "ServiceContract"


@pytest.fixture(scope="module")
def analysis():  # noqa: ANN201
    return analyze_document(load_document_here(CONTRACT), "contract")


def with_bad_import(source: str) -> str:
    return source.replace("import Data.So\n", "import Data.So\nimport DoesntExist\n")


def failed(attempt: int, code: IdrisCode, outcome: str = "errors", name: str | None = None) -> CheckFeedback:
    diagnostics = parse_transcript(transcript(name)).errors if name else ()
    return CheckFeedback(attempt, outcome, f"{outcome} in attempt {attempt}", diagnostics, code)  # type: ignore[arg-type]


class TestOfflineCoder:
    def test_the_first_module_is_the_dependent_style(self, analysis):
        """generate: style dependent, and it says so."""
        code = OfflineIdrisCoder().generate(analysis, PROJECT)
        assert code.style == "dependent" and "(style: dependent)" in code.source

    def test_a_targeted_repair_keeps_the_style(self, analysis):
        """A diagnostic the fixer understands: the same module, repaired, same style."""
        coder = OfflineIdrisCoder()
        first = coder.generate(analysis, PROJECT)
        broken = IdrisCode(with_bad_import(first.source), first.style)
        fixed = coder.fix(analysis, PROJECT, [failed(1, broken, name="error-error009")])
        assert fixed.style == "dependent" and fixed.source == first.source
        assert "removed import DoesntExist" in fixed.notes[0]

    def test_without_a_targeted_repair_the_next_style_follows(self, analysis):
        """A unification error in another file: regenerate as conservative."""
        coder = OfflineIdrisCoder()
        first = coder.generate(analysis, PROJECT)
        fixed = coder.fix(analysis, PROJECT, [failed(1, first, name="error-error003")])
        assert fixed.style == "conservative" and "no targeted repair applies" in fixed.notes[0]

    def test_imports_added_by_repairs_survive_a_new_style(self, analysis):
        """An import a repair added is kept when the module is regenerated."""
        coder = OfflineIdrisCoder()
        first = coder.generate(analysis, PROJECT)
        repaired = coder.fix(analysis, PROJECT, [failed(1, first, name="error-error004")])
        assert repaired.added_imports == ("Data.Vect",)
        restyled = coder.fix(analysis, PROJECT, [failed(1, first, name="error-error004"),
                                                 failed(2, repaired, name="error-error003")])
        assert restyled.style == "conservative" and "import Data.Vect" in restyled.source

    @pytest.mark.parametrize("outcome", ["timeout", "oom"])
    def test_a_timeout_or_memory_kill_goes_straight_to_runtime(self, analysis, outcome):
        """Nothing to normalise at compile time in the runtime style."""
        coder = OfflineIdrisCoder()
        fixed = coder.fix(analysis, PROJECT, [failed(1, coder.generate(analysis, PROJECT), outcome)])
        assert fixed.style == "runtime" and fixed.notes[0].startswith("the check")

    def test_after_the_last_style_the_coder_is_exhausted(self, analysis):
        """Three styles tried: CoderExhausted rather than a repeat."""
        coder = OfflineIdrisCoder()
        history = [failed(1, coder.generate(analysis, PROJECT), name="error-error003")]
        for attempt in (2, 3):
            history.append(failed(attempt, coder.fix(analysis, PROJECT, history), name="error-error003"))
        assert [h.code.style for h in history] == ["dependent", "conservative", "runtime"]
        with pytest.raises(CoderExhausted, match="every style"):
            coder.fix(analysis, PROJECT, history)

    def test_a_repair_that_would_repeat_a_module_is_not_returned(self, analysis):
        """If the repaired source was already checked, the coder moves on to another style."""
        coder = OfflineIdrisCoder()
        first = coder.generate(analysis, PROJECT)
        broken = IdrisCode(with_bad_import(first.source), first.style)
        history = [failed(1, first, name="error-error003"), failed(2, broken, name="error-error009")]
        fixed = coder.fix(analysis, PROJECT, history)
        assert fixed.source not in {h.code.source for h in history} and fixed.style == "conservative"

    def test_the_failure_reason_is_the_first_errors_category(self, analysis):
        """CheckFeedback.reason labels metrics: a category, else the outcome."""
        code = OfflineIdrisCoder().generate(analysis, PROJECT)
        assert failed(1, code, name="error-error009").reason == "missing_import"
        assert failed(1, code, "timeout").reason == "timeout"
