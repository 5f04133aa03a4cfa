"""The ``/v1/checks`` endpoints: existing parsers or zipped submissions against a target, as ``check``.

A check is stored as a run row of another kind (``options.kind = "check"``) and run by the
same workers as ``python -m controller check --run-id ID``: it gets leases, quotas, the
event stream, cancel and artefacts from ``/v1/runs/{id}/…`` like any run.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from controller.entry.service.auth import Caller
from controller.entry.service.check_models import CheckOut, CheckRequest
from controller.entry.service.check_submit import accept_check, read_check_upload
from controller.entry.service.idempotency import idempotency
from controller.entry.service.problems import Problem, refuse_while_draining
from controller.entry.service.routes import replayed, submitted, visible_run
from controller.entry.service.schemas import PROBLEMS
from controller.entry.service.state import state_of
from controller.entry.service.uploads import FILES
from controller.runner.dispatch import is_check

router = APIRouter(prefix="/v1/checks", tags=["checks"], responses=PROBLEMS)
CheckId = Annotated[str, Path(min_length=1, max_length=128, description="The check's id.")]
_BINARY: dict[str, Any] = {"type": "string", "format": "binary"}
_FORM = {
    "type": "object",
    "properties": {
        "parser": {"type": "array", "items": _BINARY,
                   "description": "Parser files (.py), each defining parse(pdf_path)."},
        "submission": {"type": "array", "items": _BINARY,
                       "description": "Zipped submission folders, or zips of a class of them (.zip)."},
        **{part: _BINARY for part in FILES},
        **CheckRequest.model_json_schema()["properties"],
    },
}
_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": _FORM}}}}


@router.post("", status_code=202, response_model=CheckOut, openapi_extra=_BODY,
             summary="Check parsers or zipped submissions against a named or an uploaded target",
             responses={415: PROBLEMS[422] | {"description": "Not multipart"}})
async def submit_check(request: Request, caller: Caller) -> JSONResponse:
    """Queue a check: ``target`` (a folder of the service's data/) or an uploaded target (``statement``,
    ``result``, ``target_toml``), and ``parser`` (.py) or ``submission`` (.zip) file parts; 202 once stored."""
    state = state_of(request)
    refuse_while_draining(state.draining.is_set(), "checks")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "multipart/form-data":
        raise Problem(415, f"send multipart/form-data, not {kind[:60]!r}")
    upload = await read_check_upload(request, state.settings.service)
    files = [*(("target", name, data) for name, data in sorted(upload.target_files.items())),
             *(("parser", name, data) for name, data in upload.parsers),
             *(("submission", name, data) for name, data in upload.zips)]
    key = idempotency(request, "/v1/checks", upload.request.model_dump(mode="json"), files)
    if (earlier := await run_in_threadpool(replayed, state, caller, key)) is not None:
        return earlier
    row = await run_in_threadpool(accept_check, state.settings, state.store, caller.name, upload, key)
    return submitted(state, CheckOut.of(row), row)


@router.get("/{check_id}", response_model=CheckOut, summary="A check's status and verdicts")
def get_check(check_id: CheckId, request: Request, caller: Caller) -> CheckOut:
    """Status and, once it ended, each parser's or submission's verdict."""
    row = visible_run(state_of(request), caller, check_id)
    if not is_check(row):
        raise Problem(404, f"no check {check_id[:128]} (it is a run: see /v1/runs/{check_id[:128]})")
    return CheckOut.of(row)
