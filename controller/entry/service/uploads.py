"""Reading a multipart submission: a statement PDF, optional result.csv and target.toml.

The whole body is bounded by the service's body limit (413) while it is read; the number of
parts and the size of each text field are bounded by python-multipart through Starlette
(400 beyond); unknown parts are refused. Client file names are ignored: each part is stored
under its fixed name.
"""

from __future__ import annotations

import shutil

from starlette.datastructures import UploadFile
from starlette.requests import Request

from controller.entry.service.problems import Problem
from controller.entry.service.schemas import RunRequest, form_fields
from controller.platform.settings import Settings
from controller.platform.store import StorageFull

#: Form field -> the file name it is stored under in the target folder.
FILES = {"statement": "statement.pdf", "result": "result.csv", "target_toml": "target.toml"}
FIELDS = ("target", "agent", "max_attempts", "coder")
MAX_FIELD_BYTES = 1024


async def read_upload(request: Request, max_parts: int) -> tuple[RunRequest, dict[str, bytes]]:
    """The run options and the files of a multipart submission.

    Raises:
        Problem: 422 for a missing statement, an unknown part or a field that does not validate.
    """
    async with request.form(max_files=len(FILES), max_fields=max_parts, max_part_size=MAX_FIELD_BYTES) as form:
        files: dict[str, bytes] = {}
        fields: dict[str, str] = {}
        for key, value in form.multi_items():
            if key in files or key in fields:
                raise Problem(422, f"the part {key[:40]!r} is given twice")
            if key in FILES and isinstance(value, UploadFile):
                files[FILES[key]] = await value.read()
            elif key in FIELDS and isinstance(value, str):
                fields[key] = value
            else:
                raise Problem(422, f"unexpected part {key[:40]!r}",)
    if "statement.pdf" not in files:
        raise Problem(422, "a multipart submission needs the statement PDF as the file part 'statement'")
    fields.setdefault("target", "upload")
    return RunRequest.model_validate(form_fields(fields)), files


def require_free_space(settings: Settings, incoming: int) -> None:
    """Refuse an upload the runs folder's disk cannot take while keeping its reserve.

    Raises:
        StorageFull: less than ``SBX_SERVICE__MIN_FREE_BYTES`` would be left.
    """
    folder = settings.runs_dir
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if free - incoming < settings.service.min_free_bytes:
        raise StorageFull(f"the service's disk is nearly full ({free // (1 << 20)} MiB free)",
                          hint="try again once runs have ended and their uploads are removed")
