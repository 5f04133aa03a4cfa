"""Shared fixtures.

Tests under ``tests/integration`` are marked ``docker`` and use the real engine. Without an
engine they are skipped on a developer's machine, but when ``CI=true`` (or
``SBX_REQUIRE_DOCKER=1``) a missing engine fails them: CI never counts a skip as a pass.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.entry.parent_watch import take_back_sigint
from controller.platform.settings import PROJECT_ROOT, Settings

# A suite started in the background by a non-interactive shell (`make test &`, nohup) has SIGINT
# ignored, and every child a test starts would inherit that: the tests of Ctrl-C, cancel and the
# parent watch would fail for the way the suite was started. pytest itself expects SIGINT.
take_back_sigint()
from tests.host import missing
from tests.owner import TEST_OWNER

ICICI = PROJECT_ROOT / "data" / "icici"


def _docker_required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("SBX_REQUIRE_DOCKER") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/integration as needing Docker; give every item a node id of its own."""
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.docker)
    _own_node_ids(items)


def _own_node_ids(items: list[pytest.Item]) -> None:
    """Re-id the items whose node id another item has, then refuse the session if any id is still shared.

    pytest 9.2 builds a function's id from its ``originalname`` and its callspec; schemathesis 4 makes
    one item per API operation with the operation only in ``name`` (``test_x[GET /v1/runs]``), so all
    19 of test_schema.py's items had one id. xdist keys its scope queue by id: a parallel run silently
    ran 1 of the 19. Such an item gets its name's bracket as its params; any other clash stops the run.
    """
    from collections import Counter

    shared = {nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1}
    for item in items:
        params = item.name.partition("[")[2].removesuffix("]")
        if item.nodeid in shared and params and item.parent is not None and not item.nodeid.endswith("]"):
            # _id: pytest's own field for the structured id (nodes.py); no public setter exists
            item._id = item.parent.id.child(getattr(item, "originalname", item.name)).with_params(params)
    still = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    if still:
        raise pytest.UsageError(f"{len(still)} node id(s) shared by several tests, which xdist would run once: "
                                f"{still[:5]}; give each test an id of its own")


#: The xdist work unit that holds the integration tests that use the engine: one worker runs them in order.
INTEGRATION_GROUP = "tests/integration"
#: Integration tests that need no engine (a PostgreSQL server of their worker's own): a unit apart.
ENGINE_FREE = ("tests/integration/store",)


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test: its engine group, an engine-free folder, or the test alone (unit tests)."""
    for folder in ENGINE_FREE:
        if nodeid.startswith(folder + "/"):
            return folder
    return INTEGRATION_GROUP if nodeid.startswith(INTEGRATION_GROUP + "/") else nodeid


@pytest.hookimpl(optionalhook=True)  # an xdist hook: no error where xdist is not loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN001, ANN201 - xdist's types
    """``--dist loadgroup`` (make test's default XDIST): the integration tests that use the engine in one
    work unit, run in order by one worker; every other test spread over the other workers meanwhile.

    xdist sends the largest unit first, so the engine's unit starts at once and the unit tests and
    the engine-free folders run beside it. The engine's tests stay together: they share session
    servers and built images, fixtures count what is left on the engine, each run's start reaps
    leftovers engine-wide, and several tests kill controllers and services on purpose, leaving
    containers that another test's leftover check would count (docs/development.md). The unit is
    the path, not an ``xdist_group`` mark: xdist 3.8 carries a mark's group in the node id, which
    pytest 9.2's structured node ids silently drop (pytest-xdist issue 1386).
    """
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # lazy: only under xdist

    class EngineTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return EngineTogether(config, log)


@pytest.fixture(autouse=True)
def _uncached_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cli.main`` called in-process configures logging as production does, caching each
    structlog logger on first use; a cached logger then bypasses ``capture_logs`` in every later
    test of the session (which test saw it depended on the order). Tests keep them uncached."""
    from controller.entry import cli
    from controller.platform.observability.logs import configure_logging

    monkeypatch.setattr(cli, "configure_logging", functools.partial(configure_logging, cache_loggers=False))


@pytest.fixture(autouse=True)
def _process_not_stopped() -> Iterator[None]:
    """The process's stop switch (controller.platform.stop) is thrown by an interrupt a test
    simulates in the pytest process; it must not stop every later test's executions (a thrown
    switch raises Stopped, a KeyboardInterrupt, which ends pytest's session)."""
    from controller.platform.stop import PROCESS

    yield
    PROCESS.reset()


@pytest.fixture(scope="session")
def docker_client():  # noqa: ANN201 - docker.DockerClient
    """A connected client of the real engine (skip, or fail in CI, when there is none)."""
    from agents.ports.errors import EngineUnavailable
    from controller.platform.sandbox.engine import connect

    try:
        client = connect()
    except EngineUnavailable as exc:
        if _docker_required():
            pytest.fail(f"CI needs a Docker engine: {exc.one_line()}")
        pytest.skip(f"no Docker engine: {exc.one_line()}")
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings with run folders in a temp dir and the project's real images and cache."""
    root = tmp_path_factory.mktemp("sandloop")
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=PROJECT_ROOT / "data",
        runs_dir=root / "runs",
        parsers_dir=root / "custom_parsers",
        cache_dir=PROJECT_ROOT / ".cache",
    )


@pytest.fixture(scope="session")
def sandbox_runtime(docker_client, base_settings: Settings) -> str:  # noqa: ANN001
    """The OCI runtime the sandbox tests create containers with: ``SBX_SANDBOX_RUNTIME`` of the
    test process (runc by default; ``make test-gvisor`` sets runsc), which the engine must list:
    otherwise the tests skip with one line naming ``make gvisor`` (fail when CI=true)."""
    from controller.platform.sandbox.engine import engine_runtimes

    runtime = base_settings.sandbox_runtime
    if runtime != "runc" and runtime not in engine_runtimes(docker_client):
        missing(f"the runtime {runtime}, not registered with the Docker engine (sudo make gvisor)")
    return runtime


@pytest.fixture(scope="session")
def parser_image(docker_client, base_settings: Settings) -> str:  # noqa: ANN001
    """The python-parser image, built (with its base) if the engine lacks it."""
    from controller.platform.images.builder import ensure_image, image_spec

    spec = image_spec("python-parser", base_settings)
    return ensure_image(docker_client, spec, base_settings, lambda message: print(message))


#: Owner label of sandboxes the tests create in-process.


def _ours_or_orphaned(labels: dict[str, str]) -> bool:
    """Made by this test process, or by a process (e.g. a CLI the test ran) that has exited.

    Live work of other processes on the same engine (a developer's second test session) is
    not this test's leftover.
    """
    import socket
    import time

    from controller.platform.sandbox.reaper import is_leftover

    if labels.get("org.sandloop.owner") == TEST_OWNER:
        return True
    return is_leftover(labels, now=time.time(), max_age=float("inf"), host=socket.gethostname())


@pytest.fixture
def no_leftovers(docker_client) -> Iterator[None]:  # noqa: ANN001
    """Fail the test if it leaves any platform container or volume behind."""
    yield
    managed = {"label": "org.sandloop.managed=1"}
    # sparse: no inspect per container, so another process's removal meanwhile cannot raise
    containers = [c.id[:12] for c in docker_client.containers.list(all=True, sparse=True, filters=managed)
                  if _ours_or_orphaned(c.attrs.get("Labels") or {})]
    volumes = [v.name for v in docker_client.volumes.list(filters=managed)
               if _ours_or_orphaned(v.attrs.get("Labels") or {})]
    assert not containers, f"containers left behind: {containers}"
    assert not volumes, f"volumes left behind: {volumes}"


@pytest.fixture
def icici_copy(tmp_path: Path) -> Path:
    """A writable data folder holding a copy of the icici target."""
    data = tmp_path / "data"
    shutil.copytree(ICICI, data / "icici")
    return data
