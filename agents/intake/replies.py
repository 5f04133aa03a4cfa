"""Where a turn's reply comes from: the target's script, or the terminal (``run --interactive``).

A source is called with the turn and the question the info role asks, and returns the reply,
or None when the conversation ends (the script is over; end of input at the terminal). What a
person types is hostile text like a script: a line is read to at most ``MAX_REPLY_CHARS``
characters (the rest of it is discarded, unread into memory), the same bound a script has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from agents.intake.patterns import MAX_REPLY_CHARS
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


def _discard_rest(read: TextIO) -> None:
    """Skip the rest of an overlong line without keeping it."""
    while (chunk := read.readline(_CHUNK)) and not chunk.endswith("\n"):
        pass
