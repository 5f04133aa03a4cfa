"""The verdicts ``check`` hands to whoever asked (the service's summary.json): each named
relative to the file or folder it was given as, so a service's own folders never show."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.bank_parser.checking import shown_name


@pytest.mark.parametrize(("path", "given", "name"), [
    ("/srv/runs/uploads/x/_submissions/good.py", ["/srv/runs/uploads/x/_submissions/good.py"], "good.py"),
    ("/srv/up/_submissions/class/alice/p.py", ["/srv/up/_submissions/a.py", "/srv/up/_submissions/class"],
     "alice/p.py"),
    ("/elsewhere/p.py", ["/srv/up"], "p.py"),
])
def test_shown_name(path: str, given: list[str], name: str):
    assert shown_name(Path(path), given) == name
