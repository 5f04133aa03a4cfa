"""Accepting a blueprint run: ``POST /v1/runs`` with a blueprint, and no folder on the server.

Two forms, both checked the way ``run`` checks a blueprint target before any engine call:

- **JSON** (``application/json``): ``{"blueprint": {...}, "files": {"financials.csv": "text", ...},
  "target": "name", "max_attempts": 3, "coder": "offline"}``: the blueprint, with its data and
  code files as text (each a plain file name, as the blueprint names them);
- **multipart** (``multipart/form-data``): the file part ``blueprint`` (the blueprint.json), any
  number of file parts ``data`` (each stored under its own file name, which must be a plain name
  the blueprint uses: a data file or a ``code_file``), file parts ``bundle`` (zips of such files,
  extracted by :mod:`controller.platform.safe_zip` within the ``SBX_SERVICE__ZIP_*`` bounds, their
  files at the zip's top level), and the fields ``target``, ``max_attempts``, ``coder``.

The service writes the target folder itself (``target.toml`` saying ``agent = "blueprint"``,
``blueprint.json`` and the files) into a staging folder, plans the run there, and moves it under
``runs/uploads/<run id>/`` in one rename before the run is queued, as any uploaded target
(:mod:`controller.entry.service.submit`); anything refused leaves nothing. The blueprint's tools
and validators are text here: they run only in sandboxes, in the worker's run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError
from starlette.datastructures import UploadFile
from starlette.requests import Request

from agents.ports.errors import TargetError
from controller.entry.service.check_submit import zip_limits, zip_problems
from controller.entry.service.problems import Problem, validation_line
from controller.entry.service.schemas import Coder, RunRequest, form_fields
from controller.entry.service.submit import Staging, accept_staged, plan, write_files
from controller.entry.service.uploads import require_free_space
from controller.platform.safe_zip import Budget, extract
from controller.platform.settings import Settings
from controller.platform.store import Idempotency, RunRow, RunStore

BLUEPRINT_PART, DATA_PART, BUNDLE_PART = "blueprint", "data", "bundle"
FIELDS = ("target", "max_attempts", "coder")
#: Most files (data and code) a blueprint submission may carry, and the largest blueprint.
MAX_FILES = 40
MAX_BLUEPRINT_BYTES = 256 * 1024
MAX_FIELD_BYTES = 1024
#: The names the service writes itself; an uploaded file may not take one.
RESERVED = frozenset({"target.toml", "blueprint.json", "blueprint.md", "blueprint.txt"})
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_PART_NAME = re.compile(rb'(?im)^content-disposition:[^\r\n]*\bname="(?:blueprint|data|bundle)"')


class BlueprintJSON(BaseModel):
    """A blueprint run as one JSON document: the blueprint, its files as text, the run's options."""

    model_config = ConfigDict(extra="forbid")

    blueprint: dict[str, Any] = Field(description="The blueprint (docs/blueprint.md).")
    files: dict[str, str] = Field(default_factory=dict, max_length=MAX_FILES,
                                  description="Data and code files by their plain names, as text.")
    target: str | None = Field(None, min_length=1, max_length=64, description="The run's target name; "
                               "default: the blueprint's name.")
    max_attempts: StrictInt | None = Field(None, ge=1, le=50, description="Writer attempts (QA retries + 1).")
    coder: Coder | None = Field(None, description="Who writes: offline, or an LLM provider.")


@dataclass
class BlueprintUpload:
    """What a blueprint submission carried: the blueprint's bytes, its files, zips of files, options."""

    blueprint: bytes
    request: RunRequest
    files: dict[str, bytes] = field(default_factory=dict)
    bundles: list[tuple[str, bytes]] = field(default_factory=list)


def is_blueprint_json(raw: bytes) -> bool:
    """Whether a JSON body is a blueprint run (a document with a ``blueprint`` key), not ``{"target": ...}``."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and "blueprint" in document


async def is_blueprint_upload(request: Request) -> bool:
    """Whether a multipart body has a part of a blueprint run (``blueprint``, ``data``, ``bundle``; its part
    headers are read; the body, bounded by the service's body limit, is kept for the form parser)."""
    return bool(_PART_NAME.search(await request.body()))


def from_json(raw: bytes) -> BlueprintUpload:
    """The upload a JSON blueprint run stands for.

    Raises:
        Problem: 422 for a document that does not validate.
    """
    try:
        document = BlueprintJSON.model_validate_json(raw)
    except ValidationError as exc:
        raise Problem(422, validation_line(exc.errors())) from None
    blueprint = json.dumps(document.blueprint).encode("utf-8")
    files: dict[str, bytes] = {}
    for name, text in document.files.items():
        files[_plain(name, files)] = text.encode("utf-8")
    return BlueprintUpload(blueprint, run_request(document.target, document.blueprint, document.max_attempts,
                                               document.coder), files)


async def read_blueprint_upload(request: Request, settings: Settings) -> BlueprintUpload:
    """The parts of a multipart blueprint run.

    Raises:
        Problem: 422 for a missing blueprint, an unknown or repeated part, a bad field or file name.
    """
    blueprint: bytes | None = None
    files: dict[str, bytes] = {}
    bundles: list[tuple[str, bytes]] = []
    fields: dict[str, str] = {}
    async with request.form(max_files=MAX_FILES + 1, max_fields=len(FIELDS),
                            max_part_size=MAX_FIELD_BYTES) as form:
        for key, value in form.multi_items():
            if key == BLUEPRINT_PART and isinstance(value, UploadFile) and blueprint is None:
                blueprint = await value.read(MAX_BLUEPRINT_BYTES + 1)
            elif key == DATA_PART and isinstance(value, UploadFile):
                files[_plain(value.filename or "", files)] = await value.read()
            elif key == BUNDLE_PART and isinstance(value, UploadFile):
                bundles.append((value.filename or f"bundle{len(bundles) + 1}.zip", await value.read()))
            elif key in FIELDS and isinstance(value, str) and key not in fields:
                fields[key] = value
            else:
                raise Problem(422, f"unexpected part {key[:40]!r} (or given twice)")
    if blueprint is None:
        raise Problem(422, "a blueprint run needs the blueprint as the file part 'blueprint'")
    if len(blueprint) > MAX_BLUEPRINT_BYTES:
        raise Problem(413, f"the blueprint is larger than {MAX_BLUEPRINT_BYTES >> 10} KiB")
    document = _json_object(blueprint)
    try:
        options = RunRequest.model_validate({"target": "x", **form_fields({k: v for k, v in fields.items()
                                                                            if k != "target"})})
    except ValidationError as exc:
        raise Problem(422, validation_line(exc.errors())) from None
    return BlueprintUpload(blueprint, run_request(fields.get("target"), document, options.max_attempts, options.coder),
                           files, bundles)


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        raise Problem(422, "the part 'blueprint' is not JSON (a blueprint.json)") from None
    if not isinstance(document, dict):
        raise Problem(422, "the part 'blueprint' is not a JSON object (a blueprint.json)")
    return document


def _plain(name: str, taken: dict[str, bytes]) -> str:
    """A data part's file name, which the blueprint uses as it is: plain, not reserved, not repeated."""
    if not _PLAIN.match(name) or name in (".", "..") or name in RESERVED or name in taken:
        raise Problem(422, f"the file {ascii(name[:64])} needs a plain file name the blueprint uses "
                           "(letters, digits, . _ -), once, and not target.toml or blueprint.json")
    return name


def run_request(target: str | None, blueprint: dict[str, Any], max_attempts: int | None,
                coder: str | None) -> RunRequest:
    """The run's options; the target is named after the blueprint unless the caller names it."""
    name = target or (blueprint.get("name") if isinstance(blueprint.get("name"), str) else None) or "blueprint"
    if not _NAME.match(name):
        raise Problem(422, f"target {ascii(name[:64])} is not a target name (letters, digits, - and _)")
    return RunRequest.model_validate({"target": name, "agent": "blueprint", "max_attempts": max_attempts,
                                      "coder": coder})


def accept_blueprint(settings: Settings, store: RunStore, owner: str, upload: BlueprintUpload,
                     idempotency: Idempotency | None = None) -> RunRow:
    """Write the target folder in staging, plan the run there, move it under runs/uploads/, queue it
    (with ``idempotency``: the earlier run of the same request, if there was one).

    Raises:
        Problem: 413 or 422 for a refused zip or file.
        TargetError, ConfigError: the blueprint or its files do not validate (422).
        QuotaExceeded, QueueFull: no room (429, 503).
    """
    require_free_space(settings, len(upload.blueprint) + sum(map(len, upload.files.values()))
                       + sum(len(data) for _, data in upload.bundles))
    request = upload.request

    def fill(staging: Path) -> None:
        folder = staging / request.target
        write_files(folder, {"target.toml": b'agent = "blueprint"\n', "blueprint.json": upload.blueprint,
                             **upload.files})
        _unbundle(upload.bundles, folder, staging, settings)

    def options(_staging: Path, run_id: str) -> dict[str, Any]:
        return {"upload": run_id, "blueprint": True}

    with zip_problems():
        return accept_staged(settings, store, owner, request,
                             Staging(fill, lambda staging: plan(settings, request, staging), options), idempotency)


def request_files(upload: BlueprintUpload) -> list[tuple[str, str, bytes]]:
    """What identifies the upload's files for its ``Idempotency-Key``: the blueprint, files and bundles."""
    return [("blueprint", "blueprint.json", upload.blueprint),
            *(("file", name, data) for name, data in sorted(upload.files.items())),
            *(("bundle", name, data) for name, data in upload.bundles)]


def _unbundle(bundles: list[tuple[str, bytes]], folder: Path, staging: Path, settings: Settings) -> None:
    """Extract each zip (bounded) and move its top-level files into the target folder.

    Raises:
        ZipRefused: a zip broke a bound. TargetError: a zip holds a folder, a reserved or a repeated name.
    """
    limits = zip_limits(settings.service)
    budget = Budget(limits.total_bytes, limits.members)
    for number, (client, data) in enumerate(bundles, start=1):
        where = staging / f"_bundle{number}"
        label = ascii(client[:64])[1:-1]
        for path in extract(data, where, limits, label=label, budget=budget):
            if "/" in path or path in RESERVED or (folder / path).exists() or not _PLAIN.match(path):
                raise TargetError(f"{label} holds {ascii(path[:80])}: a bundle holds the blueprint's files at its "
                                  "top level, each once, none named target.toml or blueprint.json")
            os.rename(where / path, folder / path)
        shutil.rmtree(where)
    if len(list(folder.iterdir())) > MAX_FILES + 2:
        raise TargetError(f"a blueprint run carries at most {MAX_FILES} files")

