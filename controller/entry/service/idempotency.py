"""``Idempotency-Key`` on ``POST /v1/runs`` and ``POST /v1/checks`` (the IETF httpapi draft's header).

A client that sends a key may send the same request again (a retry after a timeout or a dropped
connection) and get the run the first one made: 200 with its document, ``Idempotent-Replayed:
true``, nothing queued twice. The same key with a different request is 422. Keys belong to the
caller (two tenants' keys never meet) and are kept ``SBX_SERVICE__IDEMPOTENCY_SECONDS`` (24 h at
least). "The same request" is what it asks, not its bytes: the JSON body's fields, or the
multipart body's fields and each file's name and SHA-256, in order, and the endpoint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from starlette.requests import Request

from controller.entry.service.problems import Problem
from controller.platform.store import Idempotency

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY = 255


def key_of(request: Request) -> str | None:
    """The request's key, if it sent one.

    Raises:
        Problem: 400 for a key that is empty, longer than 255 characters or not printable ASCII.
    """
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not key or len(key) > MAX_KEY or not all(" " < c <= "~" for c in key):
        raise Problem(400, f"{HEADER} must be 1 to {MAX_KEY} printable ASCII characters without spaces")
    return key


def digest(endpoint: str, fields: dict[str, Any], files: Iterable[tuple[str, str, bytes]] = ()) -> str:
    """What identifies a request: its endpoint, fields and (part, file name, SHA-256 of content) files."""
    document = {"endpoint": endpoint, "fields": fields,
                "files": [[part, name, hashlib.sha256(data).hexdigest()] for part, name, data in files]}
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()


def idempotency(request: Request, endpoint: str, fields: dict[str, Any],
                files: Iterable[tuple[str, str, bytes]] = ()) -> Idempotency | None:
    """The submission's :class:`Idempotency`, or None without a key."""
    key = key_of(request)
    return None if key is None else Idempotency(key, digest(endpoint, fields, files))
