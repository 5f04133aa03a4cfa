"""/readyz's images check against the real Docker engine, over real HTTP: ``python -m controller
serve`` in a subprocess is ready when the python-parser image (by its content tag) is in the
engine, and answers 503 naming the missing image and the command that builds it when the tag
it computes is not there (another image prefix, so nothing is removed from the engine)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.integration.service.harness import free_port, wait_for

pytestmark = pytest.mark.usefixtures("no_leftovers")


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def serve(tmp_path: Path, parser_image: str) -> Iterator[object]:
    """Start `serve` with extra settings; yields a function returning its URL. SIGTERM at the end."""
    # The images without idris2's source archive: readiness then waits for exactly the buildable ones.
    images = tmp_path / "sandbox_images"
    shutil.copytree(PROJECT_ROOT / "sandbox_images", images, ignore=shutil.ignore_patterns("*.tar.gz", "__pycache__"))
    procs: list[subprocess.Popen[bytes]] = []

    def start(**settings: str) -> str:
        env = {**os.environ, "SBX_RUNS_DIR": str(tmp_path / "runs"), "SBX_PARSERS_DIR": str(tmp_path / "parsers"),
               "SBX_DATA_DIR": str(PROJECT_ROOT / "data"), "SBX_IMAGES_DIR": str(images),
               "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"), "SBX_LOG_FORMAT": "json", **settings}
        port = free_port()
        log = (tmp_path / f"serve-{port}.log").open("wb")
        procs.append(subprocess.Popen([sys.executable, "-m", "controller", "serve", "--port", str(port)],
                                      cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT))
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(url) or procs[-1].poll() is not None, "the service's /healthz", 120)
        assert procs[-1].poll() is None, (tmp_path / f"serve-{port}.log").read_text()[-2000:]
        return url

    yield start
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0


def test_ready_when_the_engine_has_the_agents_images(serve, parser_image: str) -> None:  # noqa: ANN001
    """The python-parser image the fixture made sure of: 200, checks.images ok."""
    url = serve()
    response = httpx.get(f"{url}/readyz", timeout=10)
    assert response.status_code == 200, response.text
    assert response.json()["checks"]["images"] == "ok"


def test_not_ready_naming_a_missing_tag_and_how_to_build_it(serve) -> None:  # noqa: ANN001
    """A prefix under which no image exists: 503 with one line naming the tag and the command;
    the other checks still pass (the engine answers), and the answer repeats from the cache."""
    prefix = f"sandloop-missing-{os.getpid()}"
    url = serve(SBX_IMAGE_PREFIX=prefix)
    first = httpx.get(f"{url}/readyz", timeout=10)
    assert first.status_code == 503, first.text
    checks = first.json()["checks"]
    assert checks["images"].startswith(f"sandbox image is not in the engine: {prefix}/python-parser:")
    assert checks["images"].endswith("(build it with: python -m controller images)")
    assert checks["engine"] == "ok" and checks["store"] == "ok"
    again = httpx.get(f"{url}/readyz", timeout=10)
    assert again.status_code == 503 and again.json()["checks"]["images"] == checks["images"]
