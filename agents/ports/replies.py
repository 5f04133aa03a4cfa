"""The run folder's reply box: replies that arrive while a conversation's run is stopped.

A conversational agent (intake) whose replies come from the service asks its question, finds
no reply for the turn in ``runs/<id>/replies/``, writes ``question.json`` and stops
(:class:`~agents.ports.errors.AwaitingReply`; its checkpoint is kept). The service shows the
question, stores the reply as ``replies/<turn>.txt`` and resumes the run, whose listen node
then reads it. Both sides use this module, so the layout is stated once.

A reply is hostile text: it is written once per turn (a second reply to the same turn is
refused, never overwrites), read back to at most :data:`MAX_REPLY_CHARS` characters, and
its line breaks become spaces (a reply is one line, as in ``replies.txt``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agents.ports.artefacts import write_atomic

REPLIES_DIR = "replies"
QUESTION_FILE = "question.json"
#: Longest reply, in characters (the intake agent's resolver reads no more).
MAX_REPLY_CHARS = 2000
#: Longest question kept in question.json.
MAX_QUESTION_CHARS = 2000
_MAX_FILE_BYTES = 4 * MAX_REPLY_CHARS + 64 * 1024
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x85]+")


@dataclass(frozen=True)
class PendingQuestion:
    """The question a stopped run waits on: its turn and its text."""

    turn: int
    question: str


def reply_file(run_dir: Path, turn: int) -> Path:
    """Where the reply of ``turn`` is kept."""
    return run_dir / REPLIES_DIR / f"{turn}.txt"


def read_reply(run_dir: Path, turn: int) -> str | None:
    """The reply of ``turn`` as one bounded line, or None when none has arrived."""
    try:
        with reply_file(run_dir, turn).open("rb") as handle:
            data = handle.read(_MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    return _BREAKS.sub(" ", data.decode("utf-8", "replace")).strip()[:MAX_REPLY_CHARS]


def write_reply(run_dir: Path, turn: int, reply: str) -> bool:
    """Keep the reply of ``turn`` unless one is there already (False then; nothing is changed).

    The file appears whole or not at all: written beside it, then hard-linked into place
    (``link`` fails on an existing name, so two replies racing for one turn cannot both win).
    """
    final = reply_file(run_dir, turn)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", dir=final.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(reply[:MAX_REPLY_CHARS].encode("utf-8", "replace"))
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, final)
    except FileExistsError:
        return False
    finally:
        Path(tmp).unlink(missing_ok=True)
    return True


def write_question(run_dir: Path, turn: int, question: str) -> None:
    """Say which question the run stops on (``question.json``, written atomically)."""
    document = {"turn": turn, "question": question[:MAX_QUESTION_CHARS]}
    write_atomic(run_dir / QUESTION_FILE, json.dumps(document, ensure_ascii=False) + "\n")


def read_question(run_dir: Path) -> PendingQuestion | None:
    """The question the run last stopped on, or None (no file, or not one this module wrote)."""
    try:
        with (run_dir / QUESTION_FILE).open("rb") as handle:
            document = json.loads(handle.read(4 * MAX_QUESTION_CHARS + 1024))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    turn, question = document.get("turn"), document.get("question")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1 or not isinstance(question, str):
        return None
    return PendingQuestion(turn, question[:MAX_QUESTION_CHARS])
