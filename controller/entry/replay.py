"""``controller replay RUN_ID [--attempt N]``: run a stored attempt's artefact again.

The artefact (a parser, a module) goes into a fresh sandbox with the run's recorded limits
and image (rebuilt from its content hash when the engine lost it, see
:func:`controller.runner.agent_runner.recorded_image`); the agent compares the outcome's facts
with the recorded ones. Exit 0 when the outcome is the same, 1 when it differs (shown as a
diff of the facts and, when they differ too, of the outputs).
"""

from __future__ import annotations

import difflib
import json

from agents.ports.run import ReplayOutcome
from controller.platform.settings import Settings
from controller.runner.agent_runner import Runner

#: Lines of an output diff shown at most.
DIFF_LINES = 60


def replay(run_id: str, attempt: int | None, settings: Settings) -> int:
    """Replay attempt ``attempt`` (default: the last) of run ``run_id``; exit 0 same, 1 different."""
    outcome, attempt = Runner(settings).replay(run_id, attempt)
    print_replay(outcome, attempt)
    return 0 if outcome.same else 1


def print_replay(outcome: ReplayOutcome, attempt: int) -> None:
    """SAME or DIFFERENT, the facts, and the diff when they differ."""
    for note in outcome.notes:
        print(f"note: {note}")
    if outcome.same:
        print(f"SAME: attempt {attempt}'s {outcome.artefact.name} gives the recorded outcome")
        for key, value in outcome.recorded.items():
            print(f"  {key:<18} {value}")
        return
    print(f"DIFFERENT: attempt {attempt}'s {outcome.artefact.name} no longer gives the recorded outcome")
    print("\n".join(facts_diff(outcome)))
    if outcome.recorded_output != outcome.replayed_output:
        print("\n".join(output_diff(outcome)))


def facts_diff(outcome: ReplayOutcome) -> list[str]:
    """A unified diff of the two outcomes' facts, one fact per line."""
    def lines(facts: dict[str, object]) -> list[str]:
        return [f"{key}: {json.dumps(value)}" for key, value in facts.items()]

    return list(difflib.unified_diff(lines(outcome.recorded), lines(outcome.replayed), "recorded", "replayed",
                                     lineterm=""))


def output_diff(outcome: ReplayOutcome) -> list[str]:
    """A unified diff of the two outputs (result document, transcript), at most DIFF_LINES lines."""
    diff = list(difflib.unified_diff(outcome.recorded_output.splitlines(), outcome.replayed_output.splitlines(),
                                     "recorded output", "replayed output", lineterm="", n=1))
    if len(diff) > DIFF_LINES:
        diff = diff[:DIFF_LINES] + [f"... {len(diff) - DIFF_LINES} more diff line(s)"]
    return diff
