"""Reading a posted form: the CSRF token first, then the fields.

Every console form posts ``csrf`` (:mod:`controller.entry.console.sessions`); a POST without
it, with another browser's, or from a page of another origin (its ``Origin`` header) is refused
with 403 before anything is done. Text fields are bounded by python-multipart through Starlette.
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request

from controller.entry.console import sessions
from controller.entry.console.viewer import host_name
from controller.entry.service.problems import Problem

MAX_FIELD_BYTES = 4096
MAX_FIELDS = 16
CSRF_REFUSED = ("this form was refused: it carries no valid CSRF token (it did not come from this console, "
                "or your session changed since the page was loaded); reload the page and send it again")


def same_origin(request: Request) -> bool:
    """Whether the request's ``Origin`` (when the browser sent one) is the console's own."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    scheme, _, rest = origin.partition("://")
    return scheme == request.url.scheme and rest == request.headers.get("host", "") and bool(host_name(request))


def check_csrf(request: Request, form: FormData) -> None:
    """Refuse (403) a form without this browser's token or from another origin.

    Raises:
        Problem: 403.
    """
    if not same_origin(request) or not sessions.csrf_ok(request, form.get(sessions.CSRF_FIELD)):
        raise Problem(403, CSRF_REFUSED)


async def posted(request: Request) -> FormData:
    """The urlencoded or multipart form of a POST without files, once its CSRF token checked out."""
    form = await request.form(max_files=0, max_fields=MAX_FIELDS, max_part_size=MAX_FIELD_BYTES)
    check_csrf(request, form)
    return form


def text(form: FormData, name: str, default: str = "") -> str:
    """A text field's value, stripped (a file where text was expected counts as absent)."""
    value = form.get(name)
    return value.strip() if isinstance(value, str) else default
