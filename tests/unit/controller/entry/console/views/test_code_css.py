"""``static/code.css``: the highlighting's colours as a served stylesheet (issue 43: code was black text).

Pygments marks tokens with classes and the CSP forbids inline styles, so the colours must come
from a file the pages link. The file is generated; this keeps it equal to its generator.
"""

from __future__ import annotations

import re

from controller.entry.console.app import STATIC
from controller.entry.console.views.code import code_css
from tests.unit.controller.entry.console.conftest import Console


def test_the_served_file_is_the_generated_one():
    assert (STATIC / "code.css").read_text() == code_css(), \
        "regenerate: python -m controller.entry.console.views.code > controller/entry/console/static/code.css"


def test_keywords_have_a_colour_in_light_and_another_in_dark():
    light, _, dark = code_css().partition("@media (prefers-color-scheme: dark)")
    colour = re.compile(r"\.highlight \.k \{[^}]*color: (#[0-9a-fA-F]{6})")
    found_light, found_dark = colour.search(light), colour.search(dark)
    assert found_light and found_dark and found_light.group(1) != found_dark.group(1)


def test_every_page_links_it_and_it_is_served_as_css(console: Console):
    assert '<link rel="stylesheet" href="/static/code.css">' in console.client.get("/").text
    response = console.client.get("/static/code.css")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
