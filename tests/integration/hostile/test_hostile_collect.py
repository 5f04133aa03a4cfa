"""The issue's attacks 2 and 3: what a sandbox writes to its output area cannot bloat the
controller's memory nor fill the host's disk.

Both assert the end behaviour only: a clean failure, bounded controller memory, no container
or volume left, and (attack 3) at most the platform's bound of bytes on the host. The bound
is the setting ``SBX_SANDBOX__OUTPUT_AREA_MB`` (``SandboxLimits.output_area_mb``), enforced
by the platform (issue 11's execution-lifecycle half).
"""

from __future__ import annotations

import re

import pytest

from agents.bank_parser.coders.base import FailureKind
from agents.bank_parser.evaluate import execute_parser, parser_spec
from agents.ports.sandbox import SandboxLimits
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import PROJECT_ROOT
from tests.integration.hostile import attacks
from tests.integration.hostile.conftest import HEADROOM
from tests.integration.hostile.harness import MIB, VolumeWatcher
from tests.integration.hostile.test_hostile_results import assert_contained, check_one, verdict
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")
#: The setting that bounds what a sandbox may write to its output area, in MiB.
TOTAL_BOUND_SETTING = "output_area_mb"


def output_bound_mib(limits: SandboxLimits) -> int:
    """The platform's bound on the output area, from the settings (fails clearly when there is none)."""
    bound = getattr(limits, TOTAL_BOUND_SETTING, None)
    if bound is None:
        pytest.fail(f"SandboxLimits has no {TOTAL_BOUND_SETTING}: nothing bounds the total written to /work/out")
    return int(bound)


class TestOutputArea:
    def test_result_json_as_a_huge_folder_is_refused_without_reading_it(self, workspace, baseline_rss):
        """Attack 2: result.json replaced by a folder of up to 384 MiB: execution_error, RSS bounded, nothing left."""
        parser, finished = check_one(workspace, "result_folder", attacks.result_folder(384))
        assert_contained(finished, baseline_rss)
        assert verdict(finished.stdout.splitlines()).startswith(f"FAIL {parser}: execution_error: ")
        assert HEADROOM < 384 * MIB  # reading the folder whole would break the memory bound

    def test_writing_past_the_bound_fails_and_the_host_sees_at_most_the_bound(
        self, docker_client, base_settings, parser_image
    ):
        """Attack 3: a parser writing 4x the bound to /work/out is stopped there; the host's disk never holds more."""
        bound = output_bound_mib(base_settings.sandbox)
        limits = base_settings.sandbox.model_copy(update={"timeout_seconds": 60})
        sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                                runtime=base_settings.sandbox_runtime)
        watcher = VolumeWatcher(docker_client)
        watcher.start_owner(TEST_OWNER)
        pdf = (PROJECT_ROOT / "data" / "icici" / "icici sample.pdf").read_bytes()
        try:
            execution = execute_parser(sandbox, parser_spec(parser_image, attacks.writes_out(4 * bound), pdf,
                                                            limits, {"agent": "pytest"}))
        finally:
            largest = watcher.stop()
        assert execution.failure == FailureKind.EXECUTION_ERROR, execution.message
        assert execution.message.startswith(f"output area full ({base_settings.sandbox.output_area_mb} MiB)")
        reported = re.search(r"wrote (\d+)", execution.sandbox.stdout.text)
        assert reported is None or int(reported.group(1)) <= bound * MIB, execution.sandbox.stdout.text[-500:]
        assert largest <= bound * MIB + MIB, f"{largest / MIB:.0f} MiB on the host's disk, bound {bound} MiB"
