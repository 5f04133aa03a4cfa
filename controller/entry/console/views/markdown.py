"""Markdown written by an LLM or a user (reports, transcripts) as safe HTML.

markdown-it-py renders CommonMark with raw HTML **off** (``<script>`` in the text stays text),
then nh3 (ammonia) keeps only an allowlist of tags and attributes and only ``http``, ``https``
and ``mailto`` links: a ``javascript:`` or ``data:`` link loses its ``href``. Links get
``rel="noopener noreferrer nofollow"``. Images are dropped (the CSP would block them anyway).
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

MAX_CHARS = 1024 * 1024
_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
TAGS = {"a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre",
        "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td"}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
SCHEMES = {"http", "https", "mailto"}


def markdown_html(text: str, section_level: int = 2) -> Markup:
    """``text`` (Markdown, untrusted) rendered and sanitised; cut at :data:`MAX_CHARS`.

    Its headings go below the page's section heading (``<h{section_level}>``): a report's ``#`` is
    an ``<h3>`` inside an ``<h2>`` section, never an ``<h1>`` beside the page's own (capped at h6).
    """
    tokens = _MD.parse(text[:MAX_CHARS])
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1:]) + section_level)}"
    rendered = _MD.renderer.render(tokens, _MD.options, {})
    return Markup(nh3.clean(rendered, tags=TAGS, attributes=ATTRIBUTES, url_schemes=SCHEMES,
                            link_rel="noopener noreferrer nofollow"))
