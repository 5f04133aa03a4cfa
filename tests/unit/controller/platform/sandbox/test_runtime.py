"""The Docker backend's OCI runtime (issue 45) without an engine: the setting, the check at start
that the engine lists it (one line naming ``make gvisor``, exit 2), the runtime on every container
the backend creates (cold and warm, and the service workers' handed ones), and where it is named
(summary.json, /healthz).

The engine is a docker-py client on a socket nobody listens on, with ``create_container`` and
``info`` replaced by recorders (test doubles, defined here): what reaches the engine's API is
docker-py's own translation of the backend's keywords.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docker
import pytest
from pydantic import ValidationError

from agents.ports.artefacts import SUMMARY_FILE
from agents.ports.errors import EngineUnavailable
from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.entry import cli
from controller.platform.artefacts import RunArtefacts
from controller.platform.sandbox import engine
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.engine import RuntimeMissing, require_runtime
from controller.platform.sandbox.factory import (
    DockerBackendConfig,
    backend_config,
    get_backend,
    sandbox_description,
)
from controller.platform.settings import Settings
from controller.runner import services
from tests.unit.controller.entry.service.conftest import make_service


class Created(Exception):
    """Raised by the recording engine after a create: the test has what it wanted."""


def offline_client(runtimes: dict[str, Any] | None = None) -> tuple[docker.DockerClient, list[dict[str, Any]]]:
    """A client that never connects: creates are recorded (then refused), info lists ``runtimes``."""
    client = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41")
    created: list[dict[str, Any]] = []

    def create_container(**kwargs: Any) -> dict[str, str]:
        created.append(kwargs)
        raise Created

    client.api.create_container = create_container  # type: ignore[method-assign]
    client.info = lambda: {"Runtimes": runtimes if runtimes is not None else {"runc": {"path": "runc"}}}  # type: ignore[method-assign]
    client.ping = lambda: True  # type: ignore[method-assign]
    return client, created


def spec() -> SandboxSpec:
    return SandboxSpec(image="sandloop/python-parser:abc", command=("python3", "p.py"),
                       warm_command=("python3", "-m", "w"), limits=SandboxLimits(), labels={"agent": "pytest"})


class TestSetting:
    def test_runc_by_default_and_runsc_from_the_environment(self, monkeypatch):
        """Nothing set: runc (the host's kernel); SBX_SANDBOX_RUNTIME=runsc chooses gVisor."""
        assert Settings(_env_file=None).sandbox_runtime == "runc"
        monkeypatch.setenv("SBX_SANDBOX_RUNTIME", "runsc")
        assert Settings(_env_file=None).sandbox_runtime == "runsc"

    @pytest.mark.parametrize("name", ["", "run sc", "--runtime=x", "a" * 65, "runsc;rm"])
    def test_a_name_that_is_no_runtime_name_is_refused(self, name):
        with pytest.raises(ValidationError):
            Settings(_env_file=None, sandbox_runtime=name)

    def test_on_kubernetes_the_runtime_class_is_the_setting(self):
        """A Docker runtime with the Kubernetes backend is refused, naming the RuntimeClass setting."""
        with pytest.raises(ValidationError, match="SBX_KUBERNETES__RUNTIME_CLASS_NAME"):
            Settings(_env_file=None, sandbox_backend="kubernetes", sandbox_runtime="runsc")

    def test_the_backend_config_carries_it(self):
        config = backend_config(Settings(_env_file=None, sandbox_runtime="runsc"))
        assert isinstance(config, DockerBackendConfig) and config.runtime == "runsc"


class TestPreflight:
    def test_a_listed_runtime_passes(self):
        client, _ = offline_client({"runc": {}, "runsc": {"path": "/usr/bin/runsc"}})
        require_runtime(client, "runsc")

    def test_runc_costs_no_engine_call(self):
        """Every engine has runc: the default is not asked about."""
        client, _ = offline_client()
        client.info = lambda: pytest.fail("info called for runc")  # type: ignore[method-assign]
        require_runtime(client, "runc")

    def test_an_unlisted_runtime_fails_in_one_line_naming_make_gvisor(self):
        client, _ = offline_client({"runc": {}})
        with pytest.raises(RuntimeMissing) as caught:
            require_runtime(client, "runsc")
        line = caught.value.one_line()
        assert "\n" not in line and "runtime 'runsc'" in line and "it lists runc" in line
        assert "make gvisor" in line and caught.value.exit_code == 2
        assert isinstance(caught.value, EngineUnavailable)

    def test_the_cli_run_stops_before_any_run_folder_exit_2_no_traceback(self, tmp_path, monkeypatch, capsys):
        """`run` with a runtime the engine lacks: one `error:` line on stderr, exit 2, no run folder."""
        client, created = offline_client({"runc": {}})
        monkeypatch.setattr(services, "connect", lambda: client)
        monkeypatch.setattr(services, "reap_leftovers", lambda _client: 0)
        monkeypatch.setenv("SBX_SANDBOX_RUNTIME", "runsc")
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
        monkeypatch.setenv("SBX_PARSERS_DIR", str(tmp_path / "parsers"))
        code = cli.main(["run", "--target", "icici"])
        err = capsys.readouterr().err
        assert code == 2
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "make gvisor" in errors[0] and "Traceback" not in err
        assert created == [] and not (tmp_path / "runs").exists()

    def test_the_service_start_refuses_an_engine_without_it_but_not_an_absent_engine(self, tmp_path, monkeypatch):
        from controller.entry.service import state

        settings = Settings(_env_file=None, sandbox_runtime="runsc")
        client, _ = offline_client({"runc": {}})
        monkeypatch.setattr(engine, "connect", lambda timeout=60: client)
        with pytest.raises(RuntimeMissing):
            state.require_engine_runtime(settings)

        def down(timeout: int = 60) -> docker.DockerClient:
            raise EngineUnavailable("no Docker engine is reachable (test)")

        monkeypatch.setattr(engine, "connect", down)
        state.require_engine_runtime(settings)  # /readyz says so; the service still starts

    def test_readyz_probes_the_runtime(self, monkeypatch):
        from controller.entry.service import state

        client, _ = offline_client({"runc": {}})
        monkeypatch.setattr(engine, "connect", lambda timeout=60: client)
        with pytest.raises(RuntimeMissing):
            state.engine_probe(Settings(_env_file=None, sandbox_runtime="runsc"))()


class TestEveryContainer:
    """``_create`` is the backend's one container create (cold, warm pool, handed): see docker.py."""

    @pytest.mark.parametrize("runtime", ["runc", "runsc"])
    def test_a_cold_container_is_created_with_the_runtime(self, runtime):
        client, created = offline_client()
        backend = DockerSandbox(client, user="10001:10001", owner="test", runtime=runtime)
        with pytest.raises(Created):
            backend._create(spec(), ["python3", "p.py"], "sandloop-test", {})
        assert [c["host_config"]["Runtime"] for c in created] == [runtime]

    def test_the_factorys_backend_and_its_warm_pool_use_it(self):
        """The backend every run gets (get_backend): its warm containers too."""
        client, created = offline_client()
        config = backend_config(Settings(_env_file=None, sandbox_runtime="runsc"))
        backend = get_backend(config, client)
        with pytest.raises(Created):
            backend._create(spec(), ["python3", "-m", "w"], "sandloop-test", {"pool": "warm"})
        assert backend.runtime == "runsc" and created[0]["host_config"]["Runtime"] == "runsc"

    def test_the_workers_handed_sandboxes_use_it(self, tmp_path):
        """The service's workers' warm containers (handed to runs) are made under the runtime, after the check."""
        from controller.platform.sandbox.worker_sandboxes import WorkerSandboxes

        client, created = offline_client({"runc": {}, "runsc": {}})
        settings = Settings(_env_file=None, sandbox_runtime="runsc", runs_dir=tmp_path)
        sandboxes = WorkerSandboxes(settings, 1, connection=lambda: client)
        backend = sandboxes._start()
        assert backend is not None and backend.runtime == "runsc"
        with pytest.raises(Created):
            backend._create(spec(), ["python3", "-m", "w"], "sandloop-test", {"pool": "warm"})
        assert created[0]["host_config"]["Runtime"] == "runsc"

    def test_the_workers_turn_warm_sandboxes_off_when_the_engine_lacks_it(self, tmp_path):
        from controller.platform.sandbox.worker_sandboxes import WorkerSandboxes

        client, _ = offline_client({"runc": {}})
        settings = Settings(_env_file=None, sandbox_runtime="runsc", runs_dir=tmp_path)
        assert WorkerSandboxes(settings, 1, connection=lambda: client)._start() is None


class TestNamed:
    def test_summary_json_names_the_backend_and_runtime(self, tmp_path: Path):
        settings = Settings(_env_file=None, sandbox_runtime="runsc")
        artefacts = RunArtefacts(tmp_path, {"sandbox": sandbox_description(settings)})
        artefacts.write_json(SUMMARY_FILE, {"status": "passed"})
        artefacts.write_json("attempts/1/sandbox.json", {"exit_code": 0})
        assert json.loads((tmp_path / SUMMARY_FILE).read_text()) == {
            "status": "passed", "sandbox": {"backend": "docker", "runtime": "runsc"}}
        assert "sandbox" not in json.loads((tmp_path / "attempts/1/sandbox.json").read_text())

    def test_kubernetes_names_its_runtime_class(self):
        settings = Settings(_env_file=None, sandbox_backend="kubernetes", kubernetes={"runtime_class_name": "gvisor"})
        assert sandbox_description(settings) == {"backend": "kubernetes", "runtime": "gvisor"}

    def test_healthz_names_the_runtime(self, tmp_path):
        service = make_service(tmp_path)
        assert service.client.get("/healthz").json()["sandbox"] == {"backend": "docker", "runtime": "runc"}


def test_the_docker_backend_is_the_one_place_containers_are_created():
    """Every sandbox (runs, analysis, OCR, validators, the checker, warm and handed ones) goes through
    DockerSandbox._create, which sets the runtime: no other module of the controller creates a container."""
    import re

    from controller.platform.settings import PROJECT_ROOT

    creating = re.compile(r"\.create_container\(|containers\.(?:create|run)\(")
    found = sorted(str(path.relative_to(PROJECT_ROOT)) for folder in ("controller", "agents")
                   for path in (PROJECT_ROOT / folder).rglob("*.py") if creating.search(path.read_text()))
    assert found == ["controller/platform/sandbox/docker.py"]


class TestOomSettles:
    """A sandbox OOM-killed whole (gVisor's kernel with it) ends before the engine records the OOM kill."""

    class Container:  # test double: the engine's view of one container, changing as it is asked again
        def __init__(self, states: list[dict[str, Any]]) -> None:
            self.states, self.attrs = states, {"State": states[0]}

        def reload(self) -> None:
            self.states = self.states[1:] or self.states
            self.attrs = {"State": self.states[0]}

    def test_a_late_oom_kill_is_the_programs_not_a_lost_container(self):
        from controller.platform.sandbox.docker import _settled
        from controller.platform.sandbox.faults import lost_container

        container = self.Container([{"ExitCode": 137, "OOMKilled": False}, {"ExitCode": 137, "OOMKilled": False},
                                    {"ExitCode": 137, "OOMKilled": True}])
        state = _settled(container, container.attrs["State"])
        assert state["OOMKilled"] and lost_container(state) is None

    def test_a_container_killed_from_outside_stays_lost_after_the_wait(self, monkeypatch):
        from controller.platform.sandbox import docker as docker_backend
        from controller.platform.sandbox.faults import lost_container

        monkeypatch.setattr(docker_backend, "_OOM_SETTLE_SECONDS", 0.3)
        container = self.Container([{"ExitCode": 137, "OOMKilled": False}])
        state = docker_backend._settled(container, container.attrs["State"])
        assert lost_container(state) is not None and lost_container(state).reason == "container_killed"
