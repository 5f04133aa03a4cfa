"""Make text that came out of a sandbox safe to print, log and feed back to a coder.

A sandbox's messages, tracebacks and output are written by hostile code: they may carry
terminal escape sequences (which could rewrite what a person sees), fake progress lines,
or megabytes on one line. Everything shown from them goes through these two functions.
"""

from __future__ import annotations

import re

#: C0 controls except tab and newline, DEL, and C1 controls (ESC and CSI among them).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x85]+")
#: Longest line kept of multi-line text: the rest of such a line is cut with a marker.
MAX_LINE_CHARS = 1000


def one_line(text: str, limit: int = 500) -> str:
    """``text`` as a single printable line of at most ``limit`` characters."""
    flat = _CONTROL.sub("?", _LINE_BREAKS.sub(" | ", _surrogates_replaced(text[: limit * 4])))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def printable(text: str, limit: int = 4000, *, tail: bool = True) -> str:
    """``text`` with control characters replaced, long lines cut, at most ``limit`` characters.

    With ``tail`` the end is kept (where a traceback's last line is), else the start.
    """
    window = text[-limit * 2:] if tail else text[: limit * 2]
    cleaned = _CONTROL.sub("?", _surrogates_replaced(window).replace("\r\n", "\n"))
    lines = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …(line cut)"
             for line in cleaned.split("\n")]
    joined = "\n".join(lines)
    return joined[-limit:] if tail else joined[:limit]


def _surrogates_replaced(text: str) -> str:
    """Lone surrogates (from JSON ``\\ud800`` escapes) cannot be written as UTF-8: replace them."""
    return text.encode("utf-8", errors="replace").decode("utf-8")
