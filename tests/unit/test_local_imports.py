"""Function-local imports only where they pay their way, each with its reason (issue 20).

A local import hides a dependency from the reader and from the layer contracts' first glance,
so each one says why it is local: a ``# lazy: <reason>`` comment on its line or the line above
(an optional heavy library kept off the start-up path, a function copied alone into generated
parsers, ...). Module-level imports and ``if TYPE_CHECKING:`` blocks are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Programs that run inside sandbox images with their own sys.path, not modules of the project.
SANDBOX_SIDE = ("controller/platform/environments/files/",)


def local_imports(source: str) -> list[int]:
    """Line numbers of the imports inside functions (or classes) of ``source``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [child.lineno for child in ast.walk(node) if isinstance(child, ast.Import | ast.ImportFrom)]
    return sorted(set(found))


def unexplained(source: str) -> list[int]:
    """The local imports of ``source`` with no ``# lazy:`` reason on their line or on the lines
    just above it that are imports or comments (one reason may cover a group of imports)."""
    lines = source.splitlines()
    return [n for n in local_imports(source) if not _explained(lines, n - 1)]


def _explained(lines: list[str], index: int) -> bool:
    if "# lazy:" in lines[index]:
        return True
    while index > 0:
        index -= 1
        text = lines[index].strip()
        if "# lazy:" in text:
            return True
        if not text.startswith(("import ", "from ", "#")):
            return False
    return False


def project_files() -> list[Path]:
    files = [p for folder in ("controller", "agents", "tools") for p in (ROOT / folder).rglob("*.py")]
    return sorted(p for p in files if not p.relative_to(ROOT).as_posix().startswith(SANDBOX_SIDE))


@pytest.mark.parametrize("path", project_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_local_import_says_why(path):
    assert unexplained(path.read_text(encoding="utf-8")) == []


def test_the_check_finds_an_unexplained_local_import():
    source = ("def f():\n    import json\n    x = 1\n    # lazy: optional\n    import yaml\n    import toml\n"
              "    return json, yaml, toml, x\n")
    assert unexplained(source) == [2]
