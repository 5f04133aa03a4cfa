"""Checkpoints: the state round-trips through the strict serializer (the execution's
DataFrame decoded again from the raw result), and a type outside the allowlist is never
constructed from a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass

from agents.bank_parser.agent import BankParserAgent
from agents.bank_parser.coders.base import FailureKind, Feedback
from agents.bank_parser.evaluate import RESULT_FILE, Execution, restore_execution
from agents.bank_parser.frame_codec import decode_result
from agents.idris.agent import IdrisAgent
from agents.ports.events import NodeEvent
from agents.ports.sandbox import CapturedStream, SandboxResult
from controller.platform.checkpoints import StrictSerializer, allowed_types, strict_serializer

RESULT = (b'{"schema": "sandloop.frame/1", "status": "ok", "columns": ["a", "b"], '
          b'"dtypes": ["float64", "object"], "data": [[1.5, "x"], [2.0, null]]}')


def serializer(agent) -> StrictSerializer:  # noqa: ANN001
    return strict_serializer(agent.info.state_types)


def execution() -> Execution:
    sandbox = SandboxResult(exit_code=0, stdout=CapturedStream(b"hi", 2), stderr=CapturedStream(b"", 0),
                            timed_out=False, oom_killed=False, wall_seconds=1.25, files={RESULT_FILE: RESULT})
    return Execution(sandbox, decode_result(RESULT), None, "returned 2 rows x 2 columns", "")


@dataclass(frozen=True)
class Intruder:
    """A type no agent's state names."""

    command: str


class TestAllowlist:
    def test_bank_parser_state_types_are_listed(self):
        """Every dataclass and enum the parser state reaches, and the execution's restorer, are allowed."""
        allowed = allowed_types(BankParserAgent().info.state_types)
        for key in [("agents.bank_parser.evaluate", "restore_execution"), ("agents.ports.events", "NodeEvent"),
                    ("agents.bank_parser.coders.base", "FailureKind"), ("agents.ports.sandbox", "SandboxResult"),
                    ("agents.bank_parser.coders.base", "Feedback")]:
            assert key in allowed

    def test_idris_state_types_are_listed(self):
        """The Idris state's check result and feedback are allowed."""
        allowed = allowed_types(IdrisAgent().info.state_types)
        assert ("agents.idris.typecheck", "CheckResult") in allowed
        assert ("agents.idris.coder", "CheckFeedback") in allowed


class TestRoundTrip:
    def test_execution_comes_back_with_the_same_frame(self):
        """An execution is stored without its DataFrame and restored with an equal one."""
        serde, original = serializer(BankParserAgent()), execution()
        restored = serde.loads_typed(serde.dumps_typed(original))
        assert isinstance(restored, Execution)
        assert restored.frame is not None and restored.frame.equals(original.frame)
        assert restored.sandbox == original.sandbox and restored.message == original.message
        assert restored.sandbox.truncated_files == ()  # tuples stay tuples

    def test_failed_execution_has_no_frame(self):
        """A failed execution's restore decodes nothing."""
        restored = restore_execution(sandbox=execution().sandbox, failure=FailureKind.TIMEOUT, message="t", detail="")
        assert restored.frame is None and restored.failure is FailureKind.TIMEOUT

    def test_state_values_round_trip(self):
        """Events and feedback (dataclasses with an enum) come back as themselves."""
        serde = serializer(BankParserAgent())
        values = [NodeEvent("execute", 1, "ok", 0.5, "d"),
                  [Feedback(1, FailureKind.MISMATCH, "1 cell differs", "detail", "code", "strategy")]]
        for value in values:
            assert serde.loads_typed(serde.dumps_typed(value)) == value


    def test_idris_analysis_round_trips_exactly(self):
        """The Idris analysis (tuples of dataclasses, Fraction rates, dates) comes back equal."""
        from agents.idris.analysis import analyze_document
        from controller.platform.settings import PROJECT_ROOT
        from tests.fakes import load_document_here

        document = load_document_here(PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf")
        analysis = analyze_document(document, "contract")
        serde = serializer(IdrisAgent())
        assert serde.loads_typed(serde.dumps_typed(analysis)) == analysis


class TestStrictness:
    def test_unlisted_type_is_not_constructed(self):
        """A checkpoint holding a type outside the allowlist yields raw data, not the object."""
        serde = serializer(BankParserAgent())
        restored = serde.loads_typed(serde.dumps_typed(Intruder("rm -rf /")))
        assert not isinstance(restored, Intruder)
        assert restored == {"command": "rm -rf /"}
