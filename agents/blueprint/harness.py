"""Runs INSIDE the sandbox (python-parser image): call a blueprint's tool or validator once.

Usage: python3 -I harness.py IN_DIR RESULT_JSON

The host never imports this file: it is sent, as text, as the input ``harness.py``, next to
``code.py`` (the blueprint's source), ``call.json`` (which role, which data files) and the
data files. It loads each data file (``.json`` parsed, ``.csv`` as a list of row dicts,
anything else as text), runs ``run(data)`` (a tool) or ``validate(report, data)`` (a
validator) and writes ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": "..."}``.

Nothing here is a security boundary: the supplied code runs in this same process and may
replace the result, exit early or print anything. The container's limits and the host's
bounded decoder (:mod:`agents.blueprint.sandboxed`) are what hold. Standard library only.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

#: The harness refuses to write a bigger result (the host refuses one anyway).
MAX_RESULT_BYTES = 256 * 1024
MAX_ERROR_CHARS = 500


def load_data(folder: Path, names: list[str]) -> dict[str, Any]:
    """Each named data file, parsed by its suffix."""
    data: dict[str, Any] = {}
    for name in names:
        path = folder / name
        text = path.read_text(encoding="utf-8")
        if name.endswith(".json"):
            data[name] = json.loads(text)
        elif name.endswith(".csv"):
            data[name] = list(csv.DictReader(text.splitlines()))
        else:
            data[name] = text
    return data


def load_function(path: Path, name: str) -> Any:
    """The supplied module's function ``name`` (the module runs here, in the sandbox)."""
    spec = importlib.util.spec_from_file_location("blueprint_code", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if not callable(function):
        raise TypeError(f"the code defines no function {name}()")
    return function


def call(folder: Path) -> Any:
    """Run the call ``call.json`` describes and return its value."""
    request = json.loads((folder / "call.json").read_text(encoding="utf-8"))
    data = load_data(folder, list(request["files"]))
    if request["role"] == "validator":
        report = (folder / "report.md").read_text(encoding="utf-8")
        return load_function(folder / "code.py", "validate")(report, data)
    return load_function(folder / "code.py", "run")(data)


def encoded(document: dict[str, Any]) -> bytes:
    """The result document, or an error document when it is too big or not JSON."""
    try:
        raw = json.dumps(document, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        return encoded({"ok": False, "error": f"the value is not JSON: {exc}"[:MAX_ERROR_CHARS]})
    if len(raw) > MAX_RESULT_BYTES:
        return encoded({"ok": False, "error": f"the value is {len(raw)} bytes of JSON, more than {MAX_RESULT_BYTES}"})
    return raw


def main(argv: list[str]) -> int:
    """Call, then write the result; exit 0 either way (the result says how it went)."""
    sys.dont_write_bytecode = True
    folder, result = Path(argv[1]), Path(argv[2])
    try:
        document = {"ok": True, "value": call(folder)}
    except Exception as exc:  # noqa: BLE001 - the supplied code's failure is the result
        document = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]}
    result.write_bytes(encoded(document))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
