"""Untrusted text comes out inert: Markdown sanitised, ANSI and code escaped, nothing executable."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from controller.entry.console.views.ansi import ansi_html
from controller.entry.console.views.code import highlighted
from controller.entry.console.views.markdown import markdown_html

HOSTILE_MARKDOWN = """# Report
<script>alert(1)</script>
<img src=x onerror=alert(1)>
[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,<script>alert(1)</script>)
[d](https://example.org/ok) <a href="javascript:alert(1)">raw</a>
<iframe src="https://evil.example"></iframe>
"""


class Elements(HTMLParser):
    """Every element and its attributes, as a browser's parser sees them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


class TestMarkdown:
    def test_no_tag_or_link_that_runs_script_survives(self):
        html = str(markdown_html(HOSTILE_MARKDOWN))
        elements = Elements(html).found
        assert not {tag for tag, _ in elements} & {"script", "img", "iframe", "object", "embed", "style"}
        assert all(not name.startswith("on") for _, attrs in elements for name in attrs)
        hrefs = [attrs["href"] for tag, attrs in elements if tag == "a" and attrs.get("href")]
        assert hrefs == ["https://example.org/ok"]
        assert '<a href="https://example.org/ok" rel="noopener noreferrer nofollow">d</a>' in html
        assert "&lt;script&gt;" in html  # shown as text, not dropped silently

    def test_plain_markdown_renders(self):
        html = str(markdown_html("## Summary\n\n- **one**\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"))
        assert "<h4>Summary</h4>" in html and "<strong>one</strong>" in html and "<td>2</td>" in html


class TestAnsi:
    def test_colours_become_classes_and_text_is_escaped(self):
        html = str(ansi_html("\x1b[31m<b>red</b>\x1b[0m"))
        assert '<span class="ansi31">&lt;b&gt;red&lt;/b&gt;</span>' in html

    def test_terminal_hyperlinks_link_nowhere(self):
        html = str(ansi_html("\x1b[1mx\x1b[0m \x1b]8;;https://evil.example\x07click\x1b]8;;\x07"))
        assert "<a" not in html and "evil.example" not in html and "click" in html

    def test_text_without_codes_is_only_escaped(self):
        assert str(ansi_html("<script>alert(1)</script>")) == "&lt;script&gt;alert(1)&lt;/script&gt;"


class TestCode:
    @pytest.mark.parametrize("name", ["parser.py", "Module.idr", "report.md", "notes.txt"])
    def test_highlighting_escapes_every_token(self, name: str):
        html, cut = highlighted('print("<script>alert(1)</script>")\n', name)
        assert "<script>" not in str(html) and "&lt;script&gt;" in str(html) and not cut

    def test_long_code_is_cut_and_says_so(self):
        html, cut = highlighted("x = 1\n" * 200_000, "parser.py")
        assert cut and str(html).count('class="linenos"') < 100_000
