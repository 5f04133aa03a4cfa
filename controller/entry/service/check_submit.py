"""Accepting a check: parsers or zipped submissions against a named or an uploaded target.

The multipart body is read within the service's body limit (413) and part counts (400).
Parser files are stored under names made from the client's (reduced to ``[A-Za-z0-9_.-]``,
never used as paths); each zip is extracted by :mod:`controller.platform.safe_zip` within the
``SBX_SERVICE__ZIP_*`` bounds (one inflated-bytes budget for all of a check's zips). All of it
is written into a staging folder, the target is checked there as ``check`` would, and the
folder is renamed to ``runs/uploads/<id>/`` before the check is queued; a refusal leaves
nothing. The check is a run row (``options.kind = "check"``) that a worker runs as
``python -m controller check --run-id ID``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from agents.base import Agent
from agents.ports.errors import TargetError
from controller.entry.service.check_models import CheckRequest
from controller.entry.service.problems import Problem
from controller.entry.service.schemas import RunRequest
from controller.entry.service.submit import Staging, accept_staged, plan, write_files
from controller.entry.service.uploads import FILES, MAX_FIELD_BYTES, require_free_space
from controller.platform.safe_zip import Budget, ZipLimits, ZipRefused, extract
from controller.platform.settings import ServiceSettings, Settings
from controller.platform.store import Idempotency, RunRow, RunStore
from controller.runner.dispatch import SUBMISSIONS

FIELDS = ("target", "as_of", "jobs")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_NAME = 64


@dataclass
class CheckUpload:
    """What a check's multipart body held: its options, the target's files, parsers and zips."""

    request: CheckRequest
    target_files: dict[str, bytes] = field(default_factory=dict)
    parsers: list[tuple[str, bytes]] = field(default_factory=list)
    zips: list[tuple[str, bytes]] = field(default_factory=list)


async def read_check_upload(request: Request, service: ServiceSettings) -> CheckUpload:
    """The check's options and files.

    Raises:
        Problem: 422 for a missing or unknown part, a part given twice, or a field that does not validate.
    """
    upload = CheckUpload(CheckRequest(target="upload"))
    fields: dict[str, str] = {}
    async with request.form(max_files=service.check_files + len(FILES), max_fields=service.upload_parts,
                            max_part_size=MAX_FIELD_BYTES) as form:
        for key, value in form.multi_items():
            if isinstance(value, UploadFile) and key in ("parser", "submission"):
                (upload.parsers if key == "parser" else upload.zips).append((value.filename or "", await value.read()))
            elif isinstance(value, UploadFile) and key in FILES and FILES[key] not in upload.target_files:
                upload.target_files[FILES[key]] = await value.read()
            elif isinstance(value, str) and key in FIELDS and key not in fields:
                fields[key] = value
            else:
                raise Problem(422, f"unexpected part {key[:40]!r} (or given twice)")
    if len(upload.parsers) + len(upload.zips) > service.check_files:
        raise Problem(422, f"a check takes at most {service.check_files} parser and zip files "
                           "(SBX_SERVICE__CHECK_FILES)")
    check_parts(upload, fields)
    upload.request = CheckRequest.model_validate(fields)
    return upload


def check_parts(upload: CheckUpload, fields: dict[str, str]) -> None:
    """Refuse a check without parsers or submissions, or without a target (named or uploaded).

    Raises:
        Problem: 422.
    """
    if not upload.parsers and not upload.zips:
        raise Problem(422, "a check needs parser files (file parts 'parser', .py) or zipped submissions "
                           "(file parts 'submission', .zip)")
    if upload.target_files and "statement.pdf" not in upload.target_files:
        raise Problem(422, "an uploaded target needs the statement PDF as the file part 'statement'")
    if not upload.target_files and "target" not in fields:
        raise Problem(422, "name a target of the service's data/ (field 'target') "
                           "or upload one (file part 'statement')")
    fields.setdefault("target", "upload")


def safe_name(client_name: str, suffix: str, taken: set[str], number: int) -> str:
    """A file or folder name from the client's file name: its last part, reduced to ``[A-Za-z0-9_.-]``,
    with ``suffix`` (kept or added; removed for a folder, ``suffix`` ""), unique among ``taken``."""
    base = _UNSAFE.sub("_", re.split(r"[/\\]", client_name)[-1]).lstrip("._-")
    stem = base[: -len(suffix)] if suffix and base.lower().endswith(suffix) else base
    stem = stem.removesuffix(".zip")[:MAX_NAME] or f"part{number}"
    name, again = f"{stem}{suffix}", 2
    while name.casefold() in taken:
        name, again = f"{stem}-{again}{suffix}", again + 1
    taken.add(name.casefold())
    return name


def zip_limits(service: ServiceSettings) -> ZipLimits:
    """The settings' bounds on an uploaded zip."""
    return ZipLimits(members=service.zip_members, member_bytes=service.zip_member_bytes,
                     total_bytes=service.zip_total_bytes, ratio=service.zip_ratio, depth=service.zip_depth)


def stage_submissions(upload: CheckUpload, folder: Path, limits: ZipLimits) -> list[str]:
    """Write the parsers and extract the zips into ``folder``; their paths relative to its parent.

    Raises:
        ZipRefused: a zip broke a bound or is not sound.
        TargetError: a zip holds no .py file, or a .git folder.
    """
    folder.mkdir()
    taken: set[str] = set()
    paths = []
    for number, (client, data) in enumerate(upload.parsers, start=1):
        name = safe_name(client, ".py", taken, number)
        (folder / name).write_bytes(data)
        paths.append(f"{SUBMISSIONS}/{name}")
    budget = Budget(limits.total_bytes, limits.members)
    for number, (client, data) in enumerate(upload.zips, start=1):
        name = safe_name(client, "", taken, number)
        files = extract(data, folder / name, limits, label=ascii(f"{name}.zip")[1:-1], budget=budget)
        if not any(path.endswith(".py") for path in files):
            raise TargetError(f"{name}.zip holds no .py file", hint="zip a submission folder or parser files")
        if any(".git" in path.split("/") for path in files):  # `check` would run git on a stranger's repository
            raise TargetError(f"{name}.zip holds a .git folder", hint="zip the submission without it; "
                              "give as_of for the date its requirements resolve as of")
        paths.append(f"{SUBMISSIONS}/{name}")
    return paths


@contextmanager
def zip_problems() -> Iterator[None]:
    """A refused zip becomes its 413 or 422 (the upload's pipeline has removed what was written)."""
    try:
        yield
    except ZipRefused as exc:
        raise Problem(413 if exc.too_big else 422, exc.one_line()) from None


def accept_check(settings: Settings, store: RunStore, owner: str, upload: CheckUpload,
                 idempotency: Idempotency | None = None) -> RunRow:
    """Stage, check and queue a check (durably); its run row (a replayed request's: the earlier one's).

    Raises:
        Problem: 413 or 422 for a refused zip.
        TargetError, ConfigError: the target cannot be checked (422).
        QuotaExceeded, QueueFull: no room (429, 503).
    """
    require_free_space(settings, sum(len(data) for _, data in (*upload.parsers, *upload.zips))
                       + sum(len(data) for data in upload.target_files.values()))
    request = upload.request
    uploaded = bool(upload.target_files)

    def fill(staging: Path) -> None:
        if uploaded:
            write_files(staging / request.target, upload.target_files)

    def options(staging: Path, run_id: str) -> dict[str, Any]:
        paths = stage_submissions(upload, staging / SUBMISSIONS, zip_limits(settings.service))
        return {"kind": "check", "paths": paths, **request.model_dump(exclude={"target"}, exclude_none=True),
                **({"upload": run_id} if uploaded else {})}

    def plan_check(staging: Path) -> Agent:
        return _plan(settings, request.target, staging if uploaded else settings.data_dir)

    with zip_problems():
        return accept_staged(settings, store, owner, RunRequest(target=request.target),
                             Staging(fill, plan_check, options), idempotency)


def _plan(settings: Settings, target: str, data_dir: Path) -> Agent:
    """The target's agent, once the target was checked as ``check`` needs it (a parser agent's)."""
    agent = plan(settings, RunRequest(target=target), data_dir)
    if agent.info.artefact != "parser":
        raise TargetError(f"{target} is a target of the {agent.name} agent, which checks a {agent.info.artefact}: "
                          "the service checks parsers", hint="check it with the command line")
    return agent
