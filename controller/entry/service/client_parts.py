"""What ``check --server`` sends: each ``--parser`` path as a multipart file part.

A ``.py`` file is a ``parser`` part; a ``.zip`` is sent as it is, a ``submission`` part; a
folder (one submission, a class of them, or a folder of parsers) is zipped here, in memory,
as the service will unpack it: regular files only (no symlinks), without hidden files and
folders (``.git``, ``.venv``), caches and virtual environments, within the same bounds the
service keeps (files, bytes), so that what is refused is refused before it is sent.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from agents.ports.errors import TargetError

Part = tuple[str, tuple[str, bytes, str]]
#: Folders never sent: caches, environments, tests of the submission itself are kept (they are code).
SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env"})
MAX_FILES = 2000
MAX_BYTES = 32 * 1024 * 1024
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def submission_parts(paths: list[str]) -> list[Part]:
    """The multipart file parts for ``paths``.

    Raises:
        TargetError: a path that does not exist, is not .py, .zip or a folder, or is too large.
    """
    parts: list[Part] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            parts.append(("submission", (f"{path.resolve().name}.zip", zip_folder(path), "application/zip")))
        elif path.is_file() and path.suffix in (".py", ".zip"):
            kind, media = ("parser", "text/x-python") if path.suffix == ".py" else ("submission", "application/zip")
            parts.append((kind, (path.name, path.read_bytes(), media)))
        else:
            raise TargetError(f"{raw}: not a parser file (.py), a zip or a folder",
                              hint="pass .py files, .zip files or folders")
    return parts


def zip_folder(folder: Path) -> bytes:
    """``folder``'s files in a zip, at their paths relative to it.

    Raises:
        TargetError: more than ``MAX_FILES`` files or ``MAX_BYTES`` bytes.
    """
    buffer = io.BytesIO()
    total = 0
    files = sent_files(folder)
    if len(files) > MAX_FILES:
        raise TargetError(f"{folder} holds more than {MAX_FILES} files to send", hint="send the submission's own files")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            data = path.read_bytes()
            total += len(data)
            if total > MAX_BYTES:
                raise TargetError(f"{folder} holds more than {MAX_BYTES} bytes to send",
                                  hint="send the submission's own files")
            archive.writestr(zipfile.ZipInfo(path.relative_to(folder).as_posix(), _ZIP_TIME), data)
    return buffer.getvalue()


def sent_files(folder: Path) -> list[Path]:
    """The regular files under ``folder`` that are sent, in a stable order (no symlink followed)."""
    found: list[Path] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        for entry in sorted(current.iterdir()):
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in SKIPPED:
                    pending.append(entry)
            elif entry.is_file() and entry.suffix != ".pyc":
                found.append(entry)
        if len(found) > MAX_FILES:
            break
    return sorted(found)
