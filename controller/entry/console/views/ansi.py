"""Sandbox output with ANSI colours as HTML: ansi2html escapes the text and turns SGR codes into
classes; nh3 then keeps only ``<span class>`` (ansi2html makes terminal hyperlinks into ``<a>``:
output of a sandbox links nowhere)."""

from __future__ import annotations

import re

import nh3
from ansi2html import Ansi2HTMLConverter
from markupsafe import Markup, escape

_ESCAPE = "\x1b"
_CONVERTER = Ansi2HTMLConverter(inline=False, line_wrap=False, escaped=True)
_TAGS = {"span"}
_ATTRIBUTES = {"span": {"class"}}
_STYLE = re.compile(r"<style[^>]*>(.*)</style>", re.S)


def ansi_html(text: str) -> Markup:
    """``text`` as safe HTML: colours as classes where it has ANSI codes, escaped as it is otherwise."""
    if _ESCAPE not in text:
        return escape(text)
    converted = _CONVERTER.convert(text, full=False)
    return Markup(nh3.clean(converted, tags=_TAGS, attributes=_ATTRIBUTES, link_rel=None))


def stylesheet() -> str:
    """The ANSI classes for light and dark backgrounds (the dark block only where they differ)."""
    light = _STYLE.search(Ansi2HTMLConverter(inline=False, dark_bg=False).produce_headers())
    dark = _STYLE.search(Ansi2HTMLConverter(inline=False, dark_bg=True).produce_headers())
    light_rules = light.group(1) if light else ""
    same = set(light_rules.splitlines())  # the 256 colours are the same on both: only what differs goes dark
    dark_rules = "\n".join(line for line in (dark.group(1) if dark else "").splitlines() if line not in same)
    return f"{light_rules}\n@media (prefers-color-scheme: dark) {{\n{dark_rules}\n}}\n"
