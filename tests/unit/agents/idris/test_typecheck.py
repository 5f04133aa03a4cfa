"""Classifying a check: passed, errors, timeout, crashed; a broken image is the environment's fault."""

from __future__ import annotations

import pytest

from agents.idris.typecheck import check_spec, module_file, run_check
from agents.ports.errors import SandboxError
from agents.ports.sandbox import SandboxLimits
from tests.unit.agents.idris.fakes import PASS, Answer, RecordedChecker, failing

SOURCE = "module Domains.X\n"


def check(answer: Answer):  # noqa: ANN201
    spec = check_spec("img", "Domains.X", SOURCE, SandboxLimits(timeout_seconds=7), {"agent": "idris"})
    return run_check(RecordedChecker([answer]), spec)


class TestSpec:
    def test_only_the_module_goes_in_and_colour_is_off(self):
        """One input file, named for the module's last component; NO_COLOR set."""
        spec = check_spec("img", "Domains.ServiceContract", SOURCE, SandboxLimits(), {})
        assert dict(spec.inputs) == {"ServiceContract.idr": SOURCE.encode()}
        assert spec.env == {"NO_COLOR": "1"} and spec.collect == ()
        assert module_file("Domains.A.B") == "B.idr"


class TestOutcomes:
    def test_exit_0_without_errors_passes(self):
        """The success transcript: passed."""
        assert check(PASS).outcome == "passed"

    def test_error_blocks_are_errors(self):
        """A recorded transcript with one error: errors, and the message says which."""
        result = check(failing("error-error009"))
        assert result.outcome == "errors" and len(result.errors) == 1
        assert result.message.startswith("1 error(s): Exists:1:1--1:19: error[missing_import]")

    def test_error_blocks_win_over_exit_0(self):
        """An error block with exit 0 is still a failure (never publish a module with errors)."""
        assert check(Answer(failing("error-error009").stdout, 0)).outcome == "errors"

    def test_a_timeout_says_the_limit(self):
        """Killed at the timeout: outcome timeout, the limit in the message."""
        result = check(Answer(timed_out=True))
        assert result.outcome == "timeout" and "7 s timeout" in result.message

    def test_a_non_zero_exit_without_errors_is_a_crash(self):
        """Exit 3, no error block: crashed, with the last lines of output."""
        result = check(Answer("Exception: heap exhausted\n", 3))
        assert result.outcome == "crashed" and "heap exhausted" in result.message

    @pytest.mark.parametrize("code", [125, 126, 127])
    def test_a_broken_image_is_a_sandbox_error(self, code):
        """The entrypoint refusing (125) or no runnable idris2 (126/127): SandboxError, exit 3."""
        with pytest.raises(SandboxError) as caught:
            check(Answer("", code, stderr="sandloop-idris: not an Idris module name: x"))
        assert caught.value.exit_code == 3
