"""Take the code out of a model's reply, robustly, and check it without running it.

Models answer with a fenced block, several blocks (a draft and a corrected version), a
block whose closing fence was cut off, bare code, or code with a sentence before and
after it. :func:`extract_python` handles all of these and checks the result with
``ast.parse`` only (parsing never executes anything); a reply that yields no usable code
comes back with ``code=None`` and a one-line ``problem`` instead of an exception.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

How = Literal["fenced", "unclosed_fence", "bare", "trimmed"]

PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE)
#: Lines that can start a Python module (where bare code begins after prose).
_CODE_START = re.compile(
    r"^(?:import\s|from\s+[\w.]+\s+import\s|def\s|class\s|async\s+def\s|@|#|\"\"\"|'''|"
    r"[A-Za-z_][\w]*\s*(?::[^=]+)?=)"
)
MAX_STARTS = 8
MAX_ENDS = 40
#: Longest reply read: far above any model's output limit; the trimming below parses the
#: reply up to MAX_STARTS * MAX_ENDS times, so an unbounded reply would be slow.
MAX_REPLY_CHARS = 512 * 1024


@dataclass(frozen=True)
class Block:
    """A fenced block: its info string's first word (lower case) and its body."""

    tag: str
    body: str
    closed: bool


@dataclass(frozen=True)
class Extraction:
    """What was found: ``code`` (or None) and, when it is unusable, why."""

    code: str | None
    how: How | None
    problem: str = ""
    candidate: str = ""  # the best text found even when it is unusable (e.g. a syntax error)

    @property
    def ok(self) -> bool:
        """Whether ``code`` is usable."""
        return self.code is not None


def fenced_blocks(reply: str) -> list[Block]:
    """Every fenced block of ``reply`` in order; an unclosed last fence runs to the end."""
    blocks: list[Block] = []
    text = _normalise(reply)
    position = 0
    while (opening := _FENCE.search(text, position)) is not None:
        fence, tag = opening["fence"], (opening["info"].split() or [""])[0].lower()
        body_start = opening.end() + 1
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        match = closing.search(text, body_start)
        if match is None:
            blocks.append(Block(tag, text[body_start:], closed=False))
            break
        blocks.append(Block(tag, text[body_start:match.start()], closed=True))
        position = match.end()
    return blocks


def extract_python(reply: str, required: str = "parse") -> Extraction:
    """The Python module in ``reply`` that defines ``required`` at top level.

    Preference: the last fenced Python block that parses and defines ``required`` (models
    often correct themselves in a second block); then the whole reply as bare code; then
    the reply with the prose before and after the code trimmed away.
    """
    if len(reply) > MAX_REPLY_CHARS:
        return Extraction(None, None, f"the reply has {len(reply)} characters; at most {MAX_REPLY_CHARS} are read")
    blocks = [b for b in fenced_blocks(reply) if b.tag in PYTHON_TAGS]
    if blocks:
        return _from_blocks(blocks, required)
    text = _normalise(reply).strip()
    if not text:
        return Extraction(None, None, "the reply was empty")
    if _defines(text, required):
        return Extraction(_tidy(text), "bare")
    trimmed = _trim_prose(text, required)
    if trimmed is not None:
        return Extraction(_tidy(trimmed), "trimmed")
    problem = _problem(text, required) if _CODE_START.match(text) else "the reply holds no Python code"
    return Extraction(None, None, problem, candidate=text if _CODE_START.match(text) else "")


def extract_fenced(reply: str, tags: frozenset[str], marker: str) -> Extraction:
    """The last fenced block tagged with one of ``tags`` (or untagged) that contains ``marker``.

    For languages the host cannot parse (Idris: ``marker="module "``); their checker runs
    in a sandbox. A reply without fences counts as code only if it starts with ``marker``.
    """
    if len(reply) > MAX_REPLY_CHARS:
        return Extraction(None, None, f"the reply has {len(reply)} characters; at most {MAX_REPLY_CHARS} are read")
    blocks = [b for b in fenced_blocks(reply) if b.tag in tags or b.tag == ""]
    good = [b for b in blocks if marker in b.body]
    if good:
        best = good[-1]
        return Extraction(_tidy(best.body), "fenced" if best.closed else "unclosed_fence")
    text = _normalise(reply).strip()
    if not blocks and text.startswith(marker):
        return Extraction(_tidy(text), "bare")
    where = "its code block" if blocks else "the reply"
    return Extraction(None, None, f"{where} has no {marker.strip()!r} line",
                      candidate=blocks[-1].body if blocks else "")


def _from_blocks(blocks: list[Block], required: str) -> Extraction:
    good = [b for b in blocks if _defines(b.body, required)]
    if good:
        best = good[-1]
        return Extraction(_tidy(best.body), "fenced" if best.closed else "unclosed_fence")
    best = max(blocks, key=lambda b: (required in b.body, len(b.body)))
    problem = _problem(best.body, required)
    if not best.closed and "SyntaxError" in problem:
        problem += " (the reply was cut off inside the code block)"
    return Extraction(None, None, problem, candidate=_tidy(best.body))


def _trim_prose(text: str, required: str) -> str | None:
    """Drop prose lines before the first code-like line and after the code, if that parses."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
    # Code ends where an unindented line that does not look like code (prose) begins.
    prose = [i for i, line in enumerate(lines) if line[:1].isalpha() and not _CODE_START.match(line)]
    for start in starts[:MAX_STARTS]:
        ends = [len(lines)] + [i for i in reversed(prose) if i > start]
        for end in ends[:MAX_ENDS]:
            candidate = "\n".join(lines[start:end])
            if _defines(candidate, required):
                return candidate
    return None


def _defines(code: str, required: str) -> bool:
    return _problem(code, required) == ""


def _problem(code: str, required: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"the code does not parse: SyntaxError at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # e.g. null bytes
        return f"the code does not parse: {exc}"
    except (MemoryError, RecursionError):  # CPython's parser on very deep nesting (e.g. 10**5 unary minus)
        return "the code does not parse: it is nested too deeply"
    if required and required not in _top_level_names(tree):
        return f"the code defines no top-level {required}() function"
    return ""


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")


def _tidy(code: str) -> str:
    return code.strip("\n").rstrip() + "\n"
