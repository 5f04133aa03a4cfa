"""schemathesis against the served /openapi.json (in-process, no engine, no workers): for every
endpoint and generated input, no 5xx, and every answer matches the schema it documents."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.platform.store.sqlite import SqliteStore

#: The app's folder, removed when the test process exits (the schema is loaded at import).
_FOLDER = tempfile.TemporaryDirectory(prefix="sandloop-schema-")


def _app():  # noqa: ANN202 - a FastAPI app
    root = Path(_FOLDER.name)
    service = Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=root / "runs",  # type: ignore[call-arg]
                       parsers_dir=root / "custom_parsers", service={"upload_bytes": 1024 * 1024})
    return _on_loopback(create_app(ServiceState(service, SqliteStore(root / "runs" / "service.sqlite"),
                                                engine_probe=lambda: None)))


def _on_loopback(app):  # noqa: ANN001, ANN202 - ASGI apps
    """A test adapter: schemathesis' client calls from ``testclient`` to ``testserver``, names the
    no-token service refuses (DNS rebinding); every request is made a loopback one, as ``serve``'s are."""
    async def local(scope, receive, send):  # noqa: ANN001, ANN202
        if scope["type"] == "http":
            headers = [(name, value) for name, value in scope["headers"] if name != b"host"]
            scope = {**scope, "client": ("127.0.0.1", 50000), "headers": [*headers, (b"host", b"127.0.0.1:9466")]}
        await app(scope, receive, send)
    return local


schema = schemathesis.openapi.from_asgi("/openapi.json", _app())


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_keeps_its_schema(case):
    # Not the Allow-header and negative-data checks: Starlette's 405 names only the first route of
    # a path, and a 4xx for input the schema allows (an unknown target) is this API's answer.
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                                   response_schema_conformance])
