"""Generated or supplied code, highlighted with Pygments: escaped by the lexer, marked up with classes.

Pygments' HTML formatter escapes every token it writes, so the result is safe markup; the CSS
classes are in ``static/console.css`` (no inline style: the CSP forbids it). Code longer than
:data:`MAX_CHARS` is cut, with a note and the artefact's download for the rest.
"""

from __future__ import annotations

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import HaskellLexer, MarkdownLexer, PythonLexer, TextLexer, TOMLLexer
from pygments.lexers.data import JsonLexer
from markupsafe import Markup

MAX_CHARS = 512 * 1024
_LEXERS: dict[str, type[Lexer]] = {".py": PythonLexer, ".idr": HaskellLexer, ".md": MarkdownLexer,
                                   ".json": JsonLexer, ".toml": TOMLLexer}


def lexer_for(name: str) -> Lexer:
    """The lexer for a file name (Idris reads well as Haskell); plain text otherwise."""
    suffix = name[name.rfind("."):].lower() if "." in name else ""
    lexer: Lexer = _LEXERS.get(suffix, TextLexer)()
    return lexer


def highlighted(source: str, name: str, anchor: str = "C") -> tuple[Markup, bool]:
    """``source`` as highlighted HTML with numbered, linkable lines (``#C12``); and whether it was cut."""
    cut = len(source) > MAX_CHARS
    formatter = HtmlFormatter(linenos="inline", lineanchors=anchor, anchorlinenos=True, cssclass="highlight",
                              wrapcode=True)
    return Markup(highlight(source[:MAX_CHARS], lexer_for(name), formatter)), cut
