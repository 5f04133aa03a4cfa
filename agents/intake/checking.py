"""``controller check --target NAME --conversation FILE...``: other scripted conversations
through the same graph and judgement as ``run``, in-process (no sandbox: nothing is
executed), each with a throwaway graph memory. One line per conversation, then
``N passed, M failed``; exit 0 when all pass.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from agents.intake.memory import MEMORY_FILE, GraphMemory
from agents.intake.roles import OfflineRoles, Roles
from agents.intake.run import converse
from agents.intake.state import IntakeContext
from agents.intake.target import IntakeTarget, load_replies
from agents.ports.events import Say
from agents.targets import collect_files
from agents.untrusted_text import one_line


def check_conversations(target: IntakeTarget, paths: list[str], say: Say, roles: Roles | None = None) -> int:
    """Judge each conversation file (one reply a line) on ``target``; 0 all passed, 1 otherwise.

    Raises:
        TargetError: a path does not exist or holds no .txt file. ConfigError: a file of replies is invalid.
    """
    files = collect_files(paths, ".txt", "conversation")
    scripts = [(path, load_replies(path)) for path in files]  # all validated before any runs
    passed = 0
    for path, replies in scripts:
        status, problems = check_one(replace(target, replies=replies), roles or OfflineRoles())
        passed += status == "passed"
        say(f"{path}: {status}" + (f": {one_line('; '.join(problems), 200)}" if problems else ""))
    say(f"{passed} passed, {len(scripts) - passed} failed")
    return 0 if passed == len(scripts) else 1


def check_one(target: IntakeTarget, roles: Roles) -> tuple[str, list[str]]:
    """Run one conversation to its end with a throwaway memory; its status and problems."""
    with tempfile.TemporaryDirectory(prefix="sandloop-intake-check-") as scratch:
        memory = GraphMemory(Path(scratch) / MEMORY_FILE)
        try:
            context = IntakeContext("check", target, memory, None, len(target.replies), roles)
            final = converse(context, lambda _event: None)
        finally:
            memory.close()
    return final.get("status", "failed"), final.get("problems", [])
