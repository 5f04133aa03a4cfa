"""Where a turn's reply comes from: the target's script, the terminal (``run --interactive``), or
the run folder's reply box (a service's run: ``POST /v1/runs/{id}/input``).

A source is called with the turn and the question the info role asks, and returns the reply,
or None when the conversation ends (the script is over; end of input at the terminal). What a
person types is hostile text like a script: a line is read to at most ``MAX_REPLY_CHARS``
characters (the rest of it is discarded, unread into memory), the same bound a script has.

The reply box (:mod:`agents.ports.replies`) never blocks: with no reply for the turn there,
the run writes the question to ``question.json`` and stops with
:class:`~agents.ports.errors.AwaitingReply`. The listen node raised, so the last checkpoint
is the one after the question was asked; the resumed run asks the box again for that turn.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from agents.intake.patterns import MAX_REPLY_CHARS
from agents.ports.errors import AwaitingReply
from agents.ports.replies import read_reply, write_question
from agents.untrusted_text import one_line

#: (turn, question) -> the reply, or None: the conversation ends.
Replies = Callable[[int, str], str | None]
_CHUNK = 4096


def scripted(replies: tuple[str, ...]) -> Replies:
    """The script's replies in turn."""

    def reply(turn: int, question: str) -> str | None:
        return replies[turn - 1] if turn <= len(replies) else None

    return reply


def from_terminal(read: TextIO, write: TextIO) -> Replies:
    """Ask each question on ``write`` and read one line from ``read``; end of input ends."""

    def reply(turn: int, question: str) -> str | None:
        write.write(f"  ? {one_line(question, 300)}\n" + ("  > " if read.isatty() else ""))
        write.flush()
        line = read.readline(MAX_REPLY_CHARS + 1)
        if not line:
            return None
        if not line.endswith("\n"):
            _discard_rest(read)
        return line.strip()[:MAX_REPLY_CHARS]

    return reply


def from_reply_box(run_dir: Path) -> Replies:
    """The reply the service stored for the turn; none yet: say the question and stop (checkpointed).

    Raises:
        AwaitingReply: no reply for the turn has arrived.
    """

    def reply(turn: int, question: str) -> str | None:
        text = read_reply(run_dir, turn)
        if text is None:
            write_question(run_dir, turn, one_line(question, 1000))
            raise AwaitingReply(turn, one_line(question, 300))
        return text

    return reply


def _discard_rest(read: TextIO) -> None:
    """Skip the rest of an overlong line without keeping it."""
    while (chunk := read.readline(_CHUNK)) and not chunk.endswith("\n"):
        pass
