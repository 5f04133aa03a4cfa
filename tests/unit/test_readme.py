"""README.md: short, and every relative link in it leads to a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from controller.platform.settings import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
#: Markdown links and images: [text](target) and ![alt](target).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    """The link targets that point into the repository (no scheme, no bare #anchor)."""
    targets = (match.group(1) for match in LINK.finditer(text))
    return [target for target in targets if not urlsplit(target).scheme and not target.startswith("#")]


def missing_links(text: str, root: Path) -> list[str]:
    """The relative links of ``text`` that name nothing under ``root``."""
    return [link for link in relative_links(text) if not (root / unquote(urlsplit(link).path)).exists()]


class TestReadme:
    def test_every_relative_link_resolves(self):
        """Each relative link or image of README.md names a file or folder that exists."""
        text = README.read_text(encoding="utf-8")
        assert len(relative_links(text)) >= 10
        assert missing_links(text, PROJECT_ROOT) == []

    def test_stays_short(self):
        """README.md stays a five-minute read (issue 36: about 250 lines at most); the rest is in docs/."""
        assert len(README.read_text(encoding="utf-8").splitlines()) <= 250

    @pytest.mark.parametrize("text, expected", [
        ("[a](docs/x.md#y) [b](https://example.org) [c](#here) ![d](docs/images/p.png)",
         ["docs/x.md#y", "docs/images/p.png"]),
    ])
    def test_relative_links_are_found(self, text, expected):
        """The link reader keeps repository paths and drops web addresses and same-page anchors."""
        assert relative_links(text) == expected

    def test_a_missing_file_is_reported(self, tmp_path):
        """Of two links, the one whose file does not exist is named (its #anchor ignored for the file)."""
        (tmp_path / "here.md").write_text("x")
        assert missing_links("[a](here.md#part) [b](gone.md#part)", tmp_path) == ["gone.md#part"]
