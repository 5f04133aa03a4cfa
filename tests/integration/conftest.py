"""Integration tests: a session-wide check that nothing the tests ran left an anonymous volume.

``no_leftovers`` (tests/conftest.py) checks the platform's labelled containers and volumes
per test. Anonymous volumes carry no label: an image's ``VOLUME`` gets one per container,
and ``containers.run(remove=True)`` keeps it (two leaked per run once, found by hand). This
fixture compares the engine's dangling anonymous volumes before and after the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

_ANONYMOUS = re.compile(r"^[0-9a-f]{64}$")


def _dangling_anonymous(client) -> set[str]:  # noqa: ANN001
    return {v.name for v in client.volumes.list(filters={"dangling": True}) if _ANONYMOUS.match(v.name or "")}


@pytest.fixture(scope="session", autouse=True)
def no_anonymous_volumes_left() -> Iterator[None]:
    """Fail the session if it leaves dangling anonymous volumes that were not there before."""
    from agents.ports.errors import EngineUnavailable
    from controller.platform.sandbox.engine import connect

    try:
        client = connect()
    except EngineUnavailable:
        yield  # no engine: the tests that need one say so themselves
        return
    before = _dangling_anonymous(client)
    yield
    try:
        left = sorted(_dangling_anonymous(client) - before)
    finally:
        client.close()
    assert not left, f"anonymous volumes left behind by the tests: {[name[:12] for name in left]}"
