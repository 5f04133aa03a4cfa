"""The Idris agent through the one agent interface, with the real engine and the idris2
stand-in image (a TEST DOUBLE: see tests/integration/agents/test_idris_loop.py).

What it pins: `check --module`'s core type-checks hand-written modules through the loop's
sandbox and diagnostics reader (one passes, one fails with the recorded error); a run through
`IdrisAgent.run` with a real checkpointer stores a state that reads back (the Idris state is
serialisable); and `IdrisAgent.replay` of that run's attempt gives the same outcome.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys

import pytest

from agents.idris.agent import IdrisAgent
from agents.idris.analysis import analyze_document
from agents.idris.checking import check_modules, print_module_report
from agents.ports.run import RunContext
from controller.platform.artefacts import RunArtefacts
from controller.platform.checkpoints import close_checkpoint, open_checkpoint
from controller.platform.progress import Progress
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import PROJECT_ROOT, agent_config
from controller.runner.agent_runner import run_record, write_run_record
from tests.fakes import load_document_here
from tests.integration.agents.test_idris_loop import standin_image  # noqa: F401 - the stand-in fixture

pytestmark = pytest.mark.usefixtures("no_leftovers")

MODEL = "module Domains.Model\n\npublic export\ndata Money = MkMoney Integer\n"
BROKEN = "module Domains.Model\n\nimport DoesntExist\n"


@pytest.fixture
def sandbox(docker_client, base_settings):  # noqa: ANN001, ANN201
    return DockerSandbox(docker_client, user=base_settings.sandbox_user, owner="pytest:idris-agent")


class TestCheckModules:
    def test_one_module_checks_and_one_does_not(self, tmp_path, standin_image, sandbox, base_settings,  # noqa: F811
                                                capsys):
        """A clean module passes; one importing a missing module fails with Idris2's diagnostic."""
        good, bad = tmp_path / "Model.idr", tmp_path / "bad" / "Model.idr"
        bad.parent.mkdir()
        good.write_text(MODEL)
        bad.write_text(BROKEN)
        outcomes = check_modules(sandbox, standin_image, base_settings.sandbox, "service-contract", [good, bad],
                                 Progress(io.StringIO()).say)
        assert [o.passed for o in outcomes] == [True, False]
        assert outcomes[0].module == "Domains.Model" and outcomes[1].check.outcome == "errors"
        print_module_report(outcomes)
        out = capsys.readouterr().out
        assert out.splitlines()[-1] == "1 passed, 1 failed"
        assert "DoesntExist" in out


class TestRunCheckpointReplay:
    def test_run_with_checkpoints_then_replay_is_the_same(self, tmp_path, standin_image, sandbox,  # noqa: F811
                                                          base_settings, parser_image):
        """A checkpointed run passes, its checkpoint reads back, and replaying attempt 1 is SAME."""
        settings = base_settings.model_copy(update={"data_dir": PROJECT_ROOT / "data", "runs_dir": tmp_path / "runs",
                                                    "idris_dir": tmp_path / "idris"})
        agent, config = IdrisAgent(), agent_config(settings)
        plan = agent.plan("service-contract", config, 2)
        run_dir = settings.runs_dir / "pytest-idris"
        record = run_record(agent, plan, "pytest-idris", standin_image, config)
        write_run_record(run_dir, record)
        checkpoint = open_checkpoint(run_dir, "pytest-idris", agent.info.state_types, resume=False)
        try:
            summary = agent.run(plan, RunContext(
                run_id="pytest-idris", config=config, sandbox=sandbox, image=standin_image,
                artefacts=RunArtefacts(run_dir), on_event=lambda event: None, checkpoint=checkpoint,
                image_of=lambda name: parser_image))  # the contract PDF is read in the parser image
            state = agent.graph(2, checkpoint.saver).get_state(checkpoint.config).values
        finally:
            close_checkpoint(checkpoint)
        assert summary.status == "passed"
        assert state["check"].outcome == "passed" and state["check"].parsed.built  # restored, not raw data
        assert [e.node for e in state["events"]] == ["analyze", "generate", "save", "typecheck", "finish"]
        # Tuples, fractions (rates) and dates of the analysis come back exactly.
        document = load_document_here(plan.inputs["document"])  # the same probe, in-process
        assert state["analysis"] == analyze_document(document, plan.inputs["config"].document_type)

        outcome = agent.replay(sandbox, standin_image, run_dir, record, 1)
        assert outcome.same, (outcome.recorded, outcome.replayed)
        assert outcome.replayed["outcome"] == "passed"


class TestCheckCliWithoutImage:
    def test_check_module_fails_in_one_line_when_the_image_cannot_be_built(self, tmp_path):
        """`check --target service-contract --module Model.idr` without an idris2 image: exit 2, one line."""
        images = tmp_path / "sandbox_images"
        shutil.copytree(PROJECT_ROOT / "sandbox_images" / "idris2", images / "idris2",
                        ignore=shutil.ignore_patterns("idris2-*.tar.gz"))
        dockerfile = images / "idris2" / "Dockerfile"
        dockerfile.write_text(re.sub(r"^ARG IDRIS2_URL=\S+", "ARG IDRIS2_URL=http://127.0.0.1:9/idris2-0.8.0.tar.gz",
                                     dockerfile.read_text(), flags=re.M))
        (tmp_path / "Model.idr").write_text(MODEL)
        env = {**os.environ, "SBX_DATA_DIR": str(PROJECT_ROOT / "data"), "SBX_RUNS_DIR": str(tmp_path / "runs"),
               "SBX_IMAGES_DIR": str(images)}
        proc = subprocess.run([sys.executable, "-m", "controller", "check", "--target", "service-contract",
                               "--module", "Model.idr"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        assert "idris2-0.8.0.tar.gz" in lines[0]
