"""A throwaway PostgreSQL server from the host's Debian packages (postgresql), on a Unix socket
in a temporary folder (no TCP port at all), one database per test.

Skipped, with the reason, only where it cannot start: no PostgreSQL binaries on the host.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _binary(name: str) -> str | None:
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:] or None
    return found if isinstance(found, str) else (found[0] if found else None)


def _as_postgres(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the postgres system user then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The libpq connection string of a fresh server (database ``postgres``)."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed on this host (Debian: apt-get install postgresql)")
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
