"""``controller replay RUN_ID [--attempt N]``: run a stored attempt's artefact again.

The artefact (a parser, a module) goes into a fresh sandbox with the run's recorded limits
and image (rebuilt from its content hash when the engine lost it, see
:func:`controller.agent_runner.recorded_image`); the agent compares the outcome's facts
with the recorded ones. Exit 0 when the outcome is the same, 1 when it differs (shown as a
diff of the facts and, when they differ too, of the outputs).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from agents.base import ReplayOutcome
from controller.agent_runner import load_run, recorded_image
from controller.errors import TargetError
from controller.progress import Progress
from controller.services import Services
from controller.settings import Settings

#: Lines of an output diff shown at most.
DIFF_LINES = 60


def replay(run_id: str, attempt: int | None, settings: Settings) -> int:
    """Replay attempt ``attempt`` (default: the last) of run ``run_id``; exit 0 same, 1 different."""
    from agents.registry import get_agent

    run_dir, record = load_run(settings, run_id)
    agent = get_agent(record["agent"])
    attempt = attempt or last_attempt(run_dir)
    progress = Progress()
    services = Services.start(settings, progress.say)
    try:
        image = recorded_image(agent, services, record["image_name"], record["image"], progress.say)
        progress.say(f"replaying attempt {attempt} of run {run_id} ({agent.name}, {record['target']}) "
                     f"in a fresh sandbox: {image}, timeout {record['limits']['timeout_seconds']:g} s, "
                     f"memory {record['limits']['memory_mb']} MiB")
        outcome = agent.replay(services.sandbox, image, run_dir, record, attempt)
    finally:
        services.close()
    print_replay(outcome, attempt)
    return 0 if outcome.same else 1


def last_attempt(run_dir: Path) -> int:
    """The highest attempt number in the run folder.

    Raises:
        TargetError: the run has no attempt.
    """
    numbers = [int(p.name) for p in (run_dir / "attempts").glob("*") if p.is_dir() and p.name.isdigit()]
    if not numbers:
        raise TargetError(f"run {run_dir.name} has no attempts to replay", hint=f"see {run_dir}")
    return max(numbers)


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
