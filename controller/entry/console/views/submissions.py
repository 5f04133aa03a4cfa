"""What the Submit page's forms post, turned into the service's own requests.

The forms post what the API takes (the same field names), so each is accepted by the
service's own code (``submit.accept``, ``submit.accept_upload``, ``check_submit.accept_check``)
and refused with its lines. A target folder may also come as one zip (a blueprint's folder, an
intake target's): it is extracted within the service's zip bounds into the staging folder
that ``submit.accept_folder`` plans and moves; a zip of one folder is that folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from starlette.datastructures import FormData, UploadFile

from controller.entry.service.check_submit import zip_limits
from controller.entry.service.uploads import FILES
from controller.platform.safe_zip import extract
from controller.platform.settings import ServiceSettings

RUN_FIELDS = ("target", "agent", "max_attempts", "coder", "interactive", "subject")
CHECK_FIELDS = ("target", "as_of", "jobs")


def text_fields(form: FormData, names: tuple[str, ...]) -> dict[str, Any]:
    """The named text fields that were filled in (a checkbox counts as true)."""
    fields: dict[str, Any] = {}
    for name in names:
        value = form.get(name)
        if isinstance(value, str) and value.strip():
            fields[name] = True if name == "interactive" else value.strip()
    return fields


def files_of(form: FormData, name: str) -> list[UploadFile]:
    """The files chosen in the file input ``name`` (a browser sends an empty part for none)."""
    return [v for v in form.getlist(name) if isinstance(v, UploadFile) and (v.filename or v.size)]


async def target_files(form: FormData) -> dict[str, bytes]:
    """statement.pdf, result.csv and target.toml, as ``accept_upload`` takes them."""
    found = {}
    for part, stored in FILES.items():
        chosen = files_of(form, part)
        if chosen:
            found[stored] = await chosen[0].read()
    return found


def unzip_into(data: bytes, target: Path, service: ServiceSettings) -> None:
    """Extract a target folder's zip to ``target``; a zip holding one folder gives that folder's contents."""
    extract(data, target, zip_limits(service), label="the folder's zip")
    inside = list(target.iterdir())
    if len(inside) == 1 and inside[0].is_dir() and not inside[0].is_symlink():
        lifted = target.with_name(target.name + ".lifted")
        inside[0].rename(lifted)
        shutil.rmtree(target)
        lifted.rename(target)
