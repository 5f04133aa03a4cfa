"""Read what ``idris2 --check`` prints into structured diagnostics.

The transcript is untrusted text from a sandbox: it is only ever matched with regular
expressions, never evaluated. Its shape (Idris2 0.8.0, colour off)::

    1/1: Building Domains.X (Domains/X.idr)          progress line
    Error: While processing right hand side of f. Undefined name y.    header
                                                     (message may go on for lines)
    Domains.X:9:7--9:8                               location: origin:L:C--L:C
     8 | fee : Integer                               source excerpt
     9 | fee = y
               ^                                     carets
    Did you mean: x?                                 notes after the excerpt

The origin is what Idris2 calls the file: for a source file it is the *module name*
(``Domains.X``), not a path. Lines and columns are 1-based; the end column is exclusive.
A block ends at the next header, progress line, REPL prompt or the end. A header of the
form ``Error:6:19--6:20`` is not a header at all but the location of a file called
``Error.idr``: locations are recognised before headers.

Bounds, since the text is untrusted: at most :data:`MAX_TRANSCRIPT_CHARS` of it are read,
each line is matched on its first :data:`MAX_LINE_CHARS` characters only, at most
:data:`MAX_DIAGNOSTICS` blocks are kept (the count of the rest is kept in ``dropped``), and
every pattern runs in linear time (possessive quantifiers where two could share a space).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Literal

Severity = Literal["error", "warning"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_LOCATION = re.compile(r"^(?P<origin>\S+?):(?P<sl>\d+):(?P<sc>\d+)--(?P<el>\d+):(?P<ec>\d+)\s*$")
_HEADER = re.compile(r"^(?P<prompt>[A-Za-z_][\w.']*> )?(?P<kind>Error|Warning|Uncaught error): ?(?P<text>.*)$")
_PROGRESS = re.compile(r"^\d+/\d+: Building (?P<module>\S+) \((?P<path>[^)]*)\)\s*$")
_PROMPT = re.compile(r"^[A-Za-z_][\w.']*> ")
_EXCERPT = re.compile(r"^\s*+\d*+\s*+\|")
_CARETS = re.compile(r"^\s*\^[\^\s]*$")
#: Most characters of a transcript read; the sandbox's output caps are smaller.
MAX_TRANSCRIPT_CHARS = 4 * 1024 * 1024
#: Characters of a line the patterns look at (Idris2's own lines are far shorter).
MAX_LINE_CHARS = 4096
#: Diagnostic blocks kept; the coder only ever reads the first few.
MAX_DIAGNOSTICS = 1000
_CONTEXT = re.compile(r"^While processing (?P<what>.+?) of (?P<name>\S+?)\.(?:\s+(?P<rest>.*))?$")


class Category(StrEnum):
    """What kind of problem a diagnostic reports; bounded, so it can label metrics."""

    MISSING_IMPORT = "missing_import"  # Module X not found
    MISSING_IMPLEMENTATION = "missing_implementation"  # Can't find an implementation for ...
    AMBIGUOUS = "ambiguous_elaboration"  # Ambiguous elaboration / Multiple solutions found
    UNIFICATION = "unification"  # When unifying ... / Mismatch between ...
    UNDEFINED_NAME = "undefined_name"  # Undefined name / No such variable
    PARSE = "parse"  # the parser gave up
    COVERAGE = "coverage"  # not covering / impossible case / unreachable clause
    TOTALITY = "totality"  # not total / not strictly positive
    DUPLICATE = "duplicate"  # already defined
    PATTERN = "pattern"  # a left-hand side that cannot be matched
    HOLES = "unsolved_holes"  # Unsolved holes
    LINEARITY = "linearity"  # linear names used wrongly
    OTHER = "other"


#: Message patterns per category, tried in order on the message without its context prefix.
_RULES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (Category.MISSING_IMPORT, re.compile(r"^Module \S+ not found")),
    (Category.UNDEFINED_NAME, re.compile(
        r"Undefined name|No such variable|is not accessible in this context|No type declaration for"
    )),
    (Category.MISSING_IMPLEMENTATION, re.compile(r"Can't find an implementation for")),
    (Category.AMBIGUOUS, re.compile(r"Ambiguous elaboration|Multiple solutions found|Ambiguous name")),
    (Category.UNIFICATION, re.compile(r"When unifying|Mismatch between|Type mismatch|Can't solve constraint")),
    (Category.TOTALITY, re.compile(r"is not total|not strictly positive")),
    (Category.COVERAGE, re.compile(r"is not covering|not a valid impossible case|Unreachable clause|Missing cases")),
    (Category.DUPLICATE, re.compile(r"is already defined")),
    (Category.HOLES, re.compile(r"Unsolved holes")),
    (Category.LINEARITY, re.compile(r"linear name")),
    (Category.PATTERN, re.compile(
        r"Can't match on|Pattern variable|Non linear pattern|Head term in pattern|shadowed by a pattern variable"
    )),
    (Category.PARSE, re.compile(
        r"^(Bracket is not properly closed|Couldn't parse|Expected (?!at most one input)|Unexpected |Cannot return|"
        r"Let-in not supported|Fields have to be named|Unterminated|Unknown operator|Multiple totality|"
        r".* is not a valid pattern|While processing multi-line string|Lexer error|Parse error|"
        r"Not the end of a block entry|Imports must go before|Keyword '\w+' is not a valid start|"
        r"Cannot begin a declaration|Can't use reserved symbol|Implementation body can only contain|"
        r"Delay only takes|Wrong number of 'with' arguments)"
    )),
)


@dataclass(frozen=True)
class Span:
    """Where in the source: 1-based lines and columns, end column exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.start_line}:{self.start_col}--{self.end_line}:{self.end_col}"


@dataclass(frozen=True)
class Diagnostic:
    """One ``Error:``/``Warning:`` block of a transcript.

    Attributes:
        severity: ``error`` or ``warning``.
        file: The origin Idris2 printed (a module name such as ``Domains.X``), or None.
        span: The first location of the block, or None when it has none.
        message: The header's text and its continuation lines up to the first location.
        category: What kind of problem (see :class:`Category`).
        context: What Idris2 was processing, e.g. ``right hand side of wrong``.
        excerpt: The source lines and carets shown under the location.
        notes: Everything after the excerpt (missing cases, suggestions, alternatives).
        text: The whole block as printed.
    """

    severity: Severity
    file: str | None
    span: Span | None
    message: str
    category: Category
    context: str
    excerpt: str
    notes: str
    text: str

    def one_line(self) -> str:
        """``file:L:C--L:C: error[category]: first line of the message``."""
        where = f"{self.file}:{self.span}: " if self.file and self.span else ""
        first = self.message.splitlines()[0] if self.message else ""
        return f"{where}{self.severity}[{self.category.value}]: {first}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (spans as a dict, the category as its value)."""
        document = asdict(self)
        document["category"] = self.category.value
        return document


@dataclass(frozen=True)
class Transcript:
    """A parsed transcript: the modules it built and every diagnostic, in order."""

    raw: str
    built: tuple[tuple[str, str], ...]
    diagnostics: tuple[Diagnostic, ...]
    dropped: int = 0

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Only the errors."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Only the warnings."""
        return tuple(d for d in self.diagnostics if d.severity == "warning")


def parse_transcript(text: str) -> Transcript:
    """Split a transcript into progress lines and diagnostic blocks (within the bounds above)."""
    lines = [line[:MAX_LINE_CHARS] for line in
             _ANSI.sub("", text[:MAX_TRANSCRIPT_CHARS].replace("\r\n", "\n")).split("\n")]
    built: list[tuple[str, str]] = []
    blocks: list[tuple[str, str, list[str]]] = []
    current: tuple[str, str, list[str]] | None = None
    for line in lines:
        kind = _line_kind(line)
        if kind == "header":
            match = _HEADER.match(line)
            assert match is not None
            current = (match["kind"], match["text"], [line])
            blocks.append(current)
            if len(blocks) > MAX_DIAGNOSTICS:
                break
        elif kind in ("progress", "prompt"):
            progress = _PROGRESS.match(line)
            if progress:
                built.append((progress["module"], progress["path"]))
            current = None
        elif current is not None:
            current[2].append(line)
    kept = blocks[:MAX_DIAGNOSTICS]
    dropped = _count_headers(lines) - len(kept) if len(blocks) > MAX_DIAGNOSTICS else 0
    return Transcript(text, tuple(built[:MAX_DIAGNOSTICS]), tuple(_block(*block) for block in kept), dropped)


def _count_headers(lines: list[str]) -> int:
    return sum(1 for line in lines if _line_kind(line) == "header")


def _line_kind(line: str) -> str:
    if _LOCATION.match(line):
        return "location"
    if _HEADER.match(line):
        return "header"
    if _PROGRESS.match(line):
        return "progress"
    if _PROMPT.match(line):
        return "prompt"
    return "text"


def _block(kind: str, header_text: str, lines: list[str]) -> Diagnostic:
    body = lines[1:]
    location_at = next((i for i, line in enumerate(body) if _LOCATION.match(line)), None)
    message_lines = [header_text] + (body if location_at is None else body[:location_at])
    message = "\n".join(message_lines).strip()
    file = span = None
    excerpt_lines: list[str] = []
    notes_from = len(body)
    if location_at is not None:
        match = _LOCATION.match(body[location_at])
        assert match is not None
        file = match["origin"]
        span = Span(int(match["sl"]), int(match["sc"]), int(match["el"]), int(match["ec"]))
        index = location_at + 1
        while index < len(body) and (_EXCERPT.match(body[index]) or _CARETS.match(body[index])):
            excerpt_lines.append(body[index])
            index += 1
        notes_from = index
    notes = "\n".join(body[notes_from:]).strip() if location_at is not None else ""
    context, plain = _split_context(message)
    severity: Severity = "warning" if kind == "Warning" else "error"
    return Diagnostic(
        severity=severity, file=file, span=span, message=message,
        category=classify(plain) if severity == "error" else Category.OTHER,
        context=context, excerpt="\n".join(excerpt_lines), notes=notes,
        text="\n".join(lines).rstrip(),
    )


def _split_context(message: str) -> tuple[str, str]:
    """``While processing right hand side of f. Rest`` → (``right hand side of f``, ``Rest``).

    Only the header line is searched, and only its first 500 characters: the transcript is
    untrusted, and a lazy pattern over a huge message would be slow.
    """
    first, _, more = message.partition("\n")
    match = _CONTEXT.match(first[:500])
    if match is None:
        return "", message
    rest = match["rest"] + first[500:] + ("\n" + more if more else "")
    return f"{match['what']} of {match['name']}", rest


def classify(message: str) -> Category:
    """The category of an error message (without its ``While processing`` prefix)."""
    for category, pattern in _RULES:
        if pattern.search(message):
            return category
    return Category.OTHER


def summarize(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic], limit: int = 5) -> str:
    """A few lines a person (or a coder) reads: one per error, then how many more."""
    errors = [d for d in diagnostics if d.severity == "error"]
    lines = [d.one_line() for d in errors[:limit]]
    if len(errors) > limit:
        lines.append(f"... and {len(errors) - limit} more error(s)")
    return "\n".join(lines)
