"""The Idris agent's loop through the real Docker sandbox, with a stand-in checker image.

No idris2 can be built here, so the image these tests check with is a TEST DOUBLE
(tests/doubles/idris2_standin): the real image's base, user, /work layout and entrypoint
(sandbox_images/idris2/check-module), with `idris2` replaced by a script that prints
*recorded* Idris2 0.8.0 transcripts (tests/fixtures/idris2-diagnostics) chosen by rules on
the module's content. Everything else is real: the graph, the offline coder and fixer, the
diagnostics reader, the Docker backend (fresh locked-down container per check, no network,
timeout kill), the artefacts and the summary.

Scenarios: success on the first check; repair-then-success (a missing module, then a
missing import, each repaired by the fixer from the transcript); a timeout followed by the
runtime style; giving up at the attempt limit. Plus the CLI when the real image cannot be
built: one line, exit 2, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import docker.errors
import pytest

from agents.idris.coder import IdrisCode, OfflineIdrisCoder
from agents.idris.run import IdrisRunRequest, run_idris_agent
from agents.ports.sandbox import SandboxLimits
from controller.platform.artefacts import RunArtefacts
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import PROJECT_ROOT
from tests.fakes import load_document_here

STANDIN = PROJECT_ROOT / "tests" / "doubles" / "idris2_standin"
TRANSCRIPTS = PROJECT_ROOT / "tests" / "fixtures" / "idris2-diagnostics"
ENTRYPOINT = PROJECT_ROOT / "sandbox_images" / "idris2" / "check-module"
CONTRACT = PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"

pytestmark = pytest.mark.usefixtures("no_leftovers")


def _stage_standin(staging: Path) -> None:
    """The stand-in's build context: its folder, the real entrypoint, the transcripts its rules name."""
    shutil.copytree(STANDIN, staging, dirs_exist_ok=True)
    shutil.copy2(ENTRYPOINT, staging / "check-module")
    (staging / "transcripts").mkdir()
    for name in re.findall(r"^transcript\t([\w-]+)\t", (STANDIN / "rules").read_text(), re.M):
        shutil.copy2(TRANSCRIPTS / name / "expected", staging / "transcripts" / f"{name}.txt")


@pytest.fixture(scope="session")
def standin_image(docker_client, base_settings, tmp_path_factory) -> str:  # noqa: ANN001
    """Build (once per content) the idris2 stand-in image with the docker SDK; return its tag."""
    staging = tmp_path_factory.mktemp("idris2-standin")
    _stage_standin(staging)
    digest = hashlib.sha256()
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        digest.update(path.relative_to(staging).as_posix().encode() + b"\0" + path.read_bytes())
    tag = f"sandloop-test/idris2-standin:{digest.hexdigest()[:12]}"
    try:
        docker_client.images.get(tag)
    except docker.errors.ImageNotFound:
        docker_client.images.build(path=str(staging), tag=tag, rm=True, forcerm=True, pull=False,
                                   buildargs={"BASE_IMAGE": base_settings.base_image})
    return tag


@pytest.fixture(scope="session")
def contract():  # noqa: ANN201 - DocumentText
    """The sample contract's text (the committed PDF, read with pdfplumber)."""
    return load_document_here(CONTRACT)


class SabotagingCoder(OfflineIdrisCoder):
    """TEST DOUBLE of an unreliable coder: the offline coder, but its *first* module imports a
    module that does not exist and uses a Vect without importing Data.Vect (mistakes an LLM
    makes). Every repair is the real offline fixer's."""

    def generate(self, analysis, project):  # noqa: ANN001, ANN201
        code = super().generate(analysis, project)
        source = code.source.replace("import Data.So\n", "import Data.So\nimport DoesntExist\n", 1)
        source += ("\n||| Instalments (added by the test double).\npublic export\n"
                   "instalments : String\ninstalments = show (the (Vect 4 Integer) [1, 2, 3, 4])\n")
        return IdrisCode(source, code.style, code.notes)


def run_loop(tmp_path, contract, image, docker_client, base_settings, *, project="ServiceContract",  # noqa: ANN001
             coder=None, max_attempts=5, timeout=30.0):  # noqa: ANN001
    request = IdrisRunRequest(
        run_id=f"pytest-{project}", target="service-contract", project=project, document_type="contract",
        document=contract, limits=SandboxLimits(timeout_seconds=timeout, memory_mb=256),
        max_attempts=max_attempts, artefacts=RunArtefacts(tmp_path / "runs" / f"pytest-{project}"),
        output_dir=tmp_path / "idris",
    )
    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner="pytest:idris")
    events = []
    summary = run_idris_agent(request, sandbox=sandbox, image=image, coder=coder or OfflineIdrisCoder(),
                              on_event=events.append)
    return summary, events, tmp_path / "runs" / request.run_id


def check_record(run_dir: Path, attempt: int) -> dict:
    return json.loads((run_dir / "attempts" / str(attempt) / "check.json").read_text())


class TestSuccess:
    def test_a_module_that_checks_is_published_after_one_attempt(self, tmp_path, contract, standin_image,
                                                                  docker_client, base_settings):
        """First check passes: status passed, module and analysis published, transcript kept."""
        summary, events, run_dir = run_loop(tmp_path, contract, standin_image, docker_client, base_settings)
        assert summary.status == "passed" and summary.exit_code == 0 and summary.attempts == 1
        module = tmp_path / "idris" / "Domains" / "ServiceContract.idr"
        assert summary.parser_path == str(module)
        assert module.read_text().startswith("||| ") and "module Domains.ServiceContract" in module.read_text()
        assert (tmp_path / "idris" / "analysis_ServiceContract.md").is_file()
        transcript = (run_dir / "attempts" / "1" / "transcript.txt").read_text()
        assert "1/1: Building Domains.ServiceContract (Domains/ServiceContract.idr)" in transcript
        assert check_record(run_dir, 1)["outcome"] == "passed"
        assert [e.node for e in events] == ["analyze", "generate", "save", "typecheck", "finish"]
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "passed"


class TestRepair:
    def test_missing_module_then_missing_import_are_repaired(self, tmp_path, contract, standin_image,
                                                             docker_client, base_settings):
        """Two real transcripts, two targeted repairs by the fixer, then the module checks."""
        summary, _, run_dir = run_loop(tmp_path, contract, standin_image, docker_client, base_settings,
                                       coder=SabotagingCoder())
        assert summary.status == "passed" and summary.attempts == 3, summary.lines()
        assert summary.failures == ["missing_import", "missing_implementation"]
        first = check_record(run_dir, 1)["errors"][0]
        assert first["category"] == "missing_import" and first["file"] == "Exists"
        assert first["span"] == {"start_line": 1, "start_col": 1, "end_line": 1, "end_col": 19}
        attempt = [(run_dir / "attempts" / str(n) / "ServiceContract.idr").read_text() for n in (1, 2, 3)]
        assert attempt[1] == attempt[0].replace("import DoesntExist\n", "")
        assert "removed import DoesntExist" in (run_dir / "attempts" / "2" / "fix.txt").read_text()
        assert "imported Data.Vect" in (run_dir / "attempts" / "3" / "fix.txt").read_text()
        published = (tmp_path / "idris" / "Domains" / "ServiceContract.idr").read_text()
        assert "import Data.Vect" in published and "DoesntExist" not in published


class TestTimeout:
    def test_a_hanging_check_is_killed_and_the_runtime_style_follows(self, tmp_path, contract, standin_image,
                                                                     docker_client, base_settings):
        """The stand-in hangs on compile-time proofs: killed at the timeout; the runtime style passes."""
        summary, events, run_dir = run_loop(tmp_path, contract, standin_image, docker_client, base_settings,
                                            project="SlowProofs", timeout=3.0)
        first = check_record(run_dir, 1)
        assert first["outcome"] == "timeout" and first["timed_out"] is True and first["exit_code"] is None
        assert summary.status == "passed" and summary.attempts == 2
        assert summary.failures == ["timeout"] and summary.styles == ["dependent", "runtime"]
        assert "slowProofs : Maybe SlowProofs" in (tmp_path / "idris" / "Domains" / "SlowProofs.idr").read_text()
        assert [e.outcome for e in events if e.node == "typecheck"] == ["timeout", "passed"]


class TestGivingUp:
    def test_the_loop_fails_at_the_attempt_limit_without_publishing(self, tmp_path, contract, standin_image,
                                                                    docker_client, base_settings):
        """Every check fails: two attempts, status failed, exit 1, nothing published."""
        summary, events, run_dir = run_loop(tmp_path, contract, standin_image, docker_client, base_settings,
                                            project="Unprovable", max_attempts=2)
        assert summary.status == "failed" and summary.exit_code == 1 and summary.attempts == 2
        assert summary.failures == ["unification", "unification"]
        assert summary.last_problem.startswith("attempt 2: errors:") and "error[unification]" in summary.last_problem
        assert not (tmp_path / "idris").exists()
        assert events[-1].node == "fail" and "2 of 2 attempt(s) used" in events[-1].detail
        assert len(list((run_dir / "attempts").iterdir())) == 2


class TestCliWithoutImage:
    def test_run_on_an_idris_target_fails_in_one_line_when_the_image_cannot_be_built(self, tmp_path):
        """No image, no archive, unreachable source: exit 2, one line saying where the archive goes."""
        images = tmp_path / "sandbox_images"
        shutil.copytree(PROJECT_ROOT / "sandbox_images" / "idris2", images / "idris2",
                        ignore=shutil.ignore_patterns("idris2-*.tar.gz"))
        dockerfile = images / "idris2" / "Dockerfile"
        dockerfile.write_text(re.sub(r"^ARG IDRIS2_URL=\S+", "ARG IDRIS2_URL=http://127.0.0.1:9/idris2-0.8.0.tar.gz",
                                     dockerfile.read_text(), flags=re.M))
        env = {**os.environ, "SBX_DATA_DIR": str(PROJECT_ROOT / "data"), "SBX_RUNS_DIR": str(tmp_path / "runs"),
               "SBX_IMAGES_DIR": str(images), "SBX_IDRIS_DIR": str(tmp_path / "idris")}
        proc = subprocess.run([sys.executable, "-m", "controller", "run", "--target", "service-contract"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        assert "idris2-0.8.0.tar.gz" in lines[0] and "make images" in lines[0]
        assert not (tmp_path / "runs").exists() and not (tmp_path / "idris").exists()


def test_the_stand_in_refuses_a_command_line_the_real_image_would_not_get(docker_client, standin_image,
                                                                          base_settings):
    """The double honours only the real entrypoint's command line: a bad module name is refused (125)."""
    from agents.idris.typecheck import check_spec

    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner="pytest:idris")
    spec = check_spec(standin_image, "Domains.X", "module Domains.X\n", SandboxLimits(timeout_seconds=20), {})
    spec = replace(spec, command=(spec.command[0], "not a module", spec.command[2]))
    result = sandbox.run(spec)
    assert result.exit_code == 125 and b"not an Idris module name" in result.stderr.data
