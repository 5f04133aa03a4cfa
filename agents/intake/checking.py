"""``controller check --target NAME --conversation FILE...``: other scripted conversations
through the same graph and judgement as ``run``, in-process (no sandbox: nothing is
executed), each with a throwaway graph memory (the memory port's scratch store). One line per conversation, then
``N passed, M failed``; exit 0 when all pass.
"""

from __future__ import annotations

from dataclasses import replace

from agents.intake.memory import GraphMemory
from agents.intake.roles import OfflineRoles, Roles
from agents.intake.run import converse
from agents.intake.state import IntakeContext
from agents.intake.target import IntakeTarget, load_replies
from agents.ports.events import Say
from agents.ports.memory import MemoryStores
from agents.targets import collect_files
from agents.untrusted_text import one_line


def check_conversations(target: IntakeTarget, paths: list[str], say: Say, memory: MemoryStores,
                        roles: Roles | None = None) -> int:
    """Judge each conversation file (one reply a line) on ``target``; 0 all passed, 1 otherwise.

    Raises:
        TargetError: a path does not exist or holds no .txt file. ConfigError: a file of replies is invalid.
    """
    files = collect_files(paths, ".txt", "conversation")
    scripts = [(path, load_replies(path)) for path in files]  # all validated before any runs
    passed = 0
    for path, replies in scripts:
        status, problems = check_one(replace(target, replies=replies), memory, roles or OfflineRoles())
        passed += status == "passed"
        say(f"{path}: {status}" + (f": {one_line('; '.join(problems), 200)}" if problems else ""))
    say(f"{passed} passed, {len(scripts) - passed} failed")
    return 0 if passed == len(scripts) else 1


def check_one(target: IntakeTarget, memory: MemoryStores, roles: Roles, graph: GraphMemory | None = None
              ) -> tuple[str, list[str]]:
    """Run one conversation to its end (with a throwaway memory unless ``graph`` is given); its status
    and problems."""
    graph = graph or GraphMemory(memory.scratch(), None, "check")
    try:
        context = IntakeContext("check", target, graph, None, len(target.replies), roles)
        final = converse(context, lambda _event: None)
    finally:
        graph.close()
    return final.get("status", "failed"), final.get("problems", [])
