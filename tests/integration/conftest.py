"""Integration tests: a session-wide check that nothing the tests ran left an anonymous volume,
and a throwaway PostgreSQL server for the tests that need one (the store's, the service's).

``no_leftovers`` (tests/conftest.py) checks the platform's labelled containers and volumes
per test. Anonymous volumes carry no label: an image's ``VOLUME`` gets one per container,
and ``containers.run(remove=True)`` keeps it (two leaked per run once, found by hand). This
fixture compares the engine's dangling anonymous volumes before and after the session.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.host import missing
from tools.host_packages import postgres_binary

_ANONYMOUS = re.compile(r"^[0-9a-f]{64}$")
#: How long a volume found dangling at the session's end is given to go before it counts as left.
VOLUME_SETTLE_SECONDS = 10


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
        left = _dangling_anonymous(client) - before
        if left:  # in a parallel run, another worker's container may be between its removal and its volume's
            time.sleep(VOLUME_SETTLE_SECONDS)
            left &= _dangling_anonymous(client)
    finally:
        client.close()
    assert not left, f"anonymous volumes left behind by the tests: {sorted(name[:12] for name in left)}"


# A throwaway PostgreSQL server from the host's Debian packages (postgresql), on a Unix socket in a
# temporary folder (no TCP port at all), one database per test. Skipped, with the reason, only
# where it cannot start: no PostgreSQL binaries on the host (make test installs them as root on
# Debian: tools/host_packages.py), and then a failure under CI=true.

def _as_postgres(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the postgres system user then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The libpq connection string of a fresh server (database ``postgres``)."""
    initdb, pg_ctl = postgres_binary("initdb"), postgres_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        missing("PostgreSQL, not installed on this host (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="sandloop-pg-"))  # under /tmp: reachable by the postgres user
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(sock, "postgres", "postgres")
    try:
        subprocess.run(_as_postgres([initdb, "-D", str(data), "-A", "trust", "-U", "sandloop", "--no-sync"]),
                       check=True, capture_output=True, text=True, timeout=300)
        subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-w", "-t", "120", "-l", str(root / "server.log"),
                                     "-o", f"-k {sock} -c listen_addresses='' -F", "start"]),
                       check=True, capture_output=True, text=True, timeout=300)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {(exc.stderr or exc.stdout).strip()[-500:]}")
    try:
        yield f"host={sock} dbname=postgres user=sandloop"
    finally:
        subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True,
                       timeout=120, check=False)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_dsn(postgres_server: str) -> str:
    """A connection string to a new, empty database of the server."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.replace("dbname=postgres", f"dbname={name}")
