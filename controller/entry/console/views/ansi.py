"""Sandbox output with ANSI colours as HTML: ansi2html escapes the text and turns SGR codes into
classes; nh3 then keeps only ``<span class>`` (ansi2html makes terminal hyperlinks into ``<a>``:
output of a sandbox links nowhere)."""

from __future__ import annotations

import nh3
from ansi2html import Ansi2HTMLConverter
from markupsafe import Markup, escape

_ESCAPE = "\x1b"
_CONVERTER = Ansi2HTMLConverter(inline=False, line_wrap=False, escaped=True)
_TAGS = {"span"}
_ATTRIBUTES = {"span": {"class"}}


def ansi_html(text: str) -> Markup:
    """``text`` as safe HTML: colours as classes where it has ANSI codes, escaped as it is otherwise."""
    if _ESCAPE not in text:
        return escape(text)
    converted = _CONVERTER.convert(text, full=False)
    return Markup(nh3.clean(converted, tags=_TAGS, attributes=_ATTRIBUTES, link_rel=None))
