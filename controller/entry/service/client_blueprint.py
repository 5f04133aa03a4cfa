"""What ``run --server URL --blueprint FILE`` sends: the blueprint and the files it names, as a
multipart upload (:mod:`controller.entry.service.blueprint_submit` accepts it).

The blueprint is read (bounded) only to learn which files its tools and validators name: each
data file and ``code_file`` is taken from the blueprint's own folder and sent in one zip (the
part ``bundle``), with the blueprint as the part ``blueprint``. A named file that is missing is one
line here, before anything is sent.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from agents.ports.errors import TargetError

MAX_BLUEPRINT_BYTES = 256 * 1024
MAX_FILE_BYTES = 1 << 20
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def blueprint_body(path: Path, options: dict[str, Any]) -> dict[str, Any]:
    """httpx's ``files`` and ``data`` for a blueprint run of ``path`` with the run's ``options``.

    Raises:
        TargetError: the blueprint cannot be read, is not a JSON object, or names a file its folder lacks.
    """
    raw = _read(path, MAX_BLUEPRINT_BYTES, "blueprint")
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise TargetError(f"{path} is not JSON: {str(exc)[:120]}", hint="send a blueprint.json") from exc
    if not isinstance(document, dict):
        raise TargetError(f"{path} is not a JSON object", hint="send a blueprint.json")
    files: list[tuple[str, tuple[str, bytes, str]]] = [("blueprint", (path.name, raw, "application/json"))]
    names = named_files(document)
    if names:
        files.append(("bundle", ("files.zip", _zip(path.parent, names), "application/zip")))
    return {"files": files, "data": {k: str(v) for k, v in options.items() if v is not None}}


def named_files(document: dict[str, Any]) -> list[str]:
    """The plain file names a blueprint's tools and validators read or take their code from."""
    qa = document.get("qa")
    qa = qa if isinstance(qa, dict) else {}
    specs = [s for s in [*_list(document.get("tools")), *_list(qa.get("validators"))] if isinstance(s, dict)]
    names = [n for s in specs for n in _list(s.get("files"))] + [s.get("code_file") for s in specs]
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and _PLAIN.match(n)))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _zip(folder: Path, names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), _read(folder / name, MAX_FILE_BYTES, "file"))
    return buffer.getvalue()


def _read(path: Path, cap: int, what: str) -> bytes:
    if not path.is_file():
        raise TargetError(f"no {what} {path}", hint="the blueprint's data and code files are sent from its folder")
    with path.open("rb") as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise TargetError(f"{path} is larger than {cap >> 10} KiB")
    return data
