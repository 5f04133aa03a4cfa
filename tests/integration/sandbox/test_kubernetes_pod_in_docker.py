"""The in-Pod side of the Kubernetes backend, for real: the rendered sandbox Pod's containers
run on the Docker engine with the Pod's settings translated (``pod_in_docker.py``), and the
backend's decoder reads what the collector wrote, including when the parser is hostile."""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest

from agents.bank_parser.evaluate import RESULT_FILE, parser_spec
from agents.bank_parser.frame_codec import decode_result
from agents.ports.sandbox import SandboxLimits
from controller.platform.sandbox.kubernetes.frame import Frame, decode_frame
from controller.platform.sandbox.kubernetes.podspec import input_configmap, pod_labels, sandbox_pod
from controller.platform.settings import PROJECT_ROOT
from tests.integration.sandbox.pod_in_docker import PodRun, run_pod


@pytest.fixture(autouse=True)
def no_pod_leftovers(docker_client):  # noqa: ANN001, ANN201
    """Fail if any container or volume these Pods used remains (selected by their own label, so
    other sessions' work on a shared engine is not counted)."""
    yield
    mine = {"label": "org.sandloop.agent=pytest-k8s"}
    assert not docker_client.containers.list(all=True, ignore_removed=True, filters=mine)
    assert not docker_client.volumes.list(filters=mine)
PDF = (PROJECT_ROOT / "data" / "icici" / "icici sample.pdf").read_bytes()


def _run(docker_client, image: str, parser: str, **limits: object) -> tuple[PodRun, Frame]:  # noqa: ANN001
    spec = parser_spec(image, textwrap.dedent(parser), PDF,
                       SandboxLimits(**{"timeout_seconds": 90, **limits}), {"agent": "pytest"})  # type: ignore[arg-type]
    labels = pod_labels(spec, "pytest", 0)
    configmap = input_configmap("sandloop-test", "sandloop-sandboxes", spec, labels)
    pod = sandbox_pod("sandloop-test", "sandloop-sandboxes", spec, labels, user="10001:10001")
    run = run_pod(docker_client, configmap, pod)
    assert (run.program_exit, run.collector_exit) == (0, 0), run
    return run, decode_frame(run.collector_log, spec)


class TestPodInDocker:
    def test_a_parser_result_comes_back_through_the_collectors_frame(self, docker_client, parser_image):
        """A parser reading the mounted PDF returns a DataFrame the controller decodes unchanged."""
        run, frame = _run(docker_client, parser_image, """
            import pandas as pd, pdfplumber
            def parse(path):
                with pdfplumber.open(path) as pdf:
                    return pd.DataFrame({"pages": [len(pdf.pages)], "x": [1.5]})
        """)
        assert frame.exit_code == 0 and not frame.timed_out and not frame.oom_killed
        decoded = decode_result(frame.files[RESULT_FILE])
        assert isinstance(decoded, pd.DataFrame)
        assert decoded.equals(pd.DataFrame({"pages": [2], "x": [1.5]}))

    def test_a_hostile_parser_cannot_forge_the_frame_status_or_files(self, docker_client, parser_image):
        """Forged frame lines on stdout stay stdout bytes; a planted status, a link and a
        lingering child change nothing: exit code and files are what really happened."""
        forged_status = json.dumps({"t": "status", "exit_code": 0, "timed_out": False, "oom_kills": 0})
        run, frame = _run(docker_client, parser_image, f"""
            import json, os, subprocess, sys
            def parse(path):
                print('{{"t": "begin", "frame": "sandloop.k8s/1"}}')
                print({forged_status!r})
                print('{{"t": "end", "count": 1, "sha256": "0"}}', flush=True)
                os.makedirs("/work/out/.sandloop", exist_ok=True)
                with open("/work/out/.sandloop/status.json", "w") as fh:
                    fh.write({forged_status!r})
                os.symlink("/etc/passwd", "/work/out/extra.json")
                os.symlink("/etc/passwd", "/work/out/result.json")
                # A child that outlives the parser and keeps rewriting the status.
                subprocess.Popen([sys.executable, "-c",
                    "import time\\nwhile True:\\n  open('/work/out/.sandloop/status.json','w').write('{{}}')\\n  time.sleep(0.01)"],
                    start_new_session=True)
                os._exit(7)
        """)  # noqa: E501 - the parser's source, run as written
        assert frame.exit_code == 7
        assert '"t": "end"' in frame.streams["stdout"].text  # printed, kept as data, never parsed
        assert frame.files == {}  # result.json was a link: not collected; extra.json was never asked for
        assert run.program_log == b""  # the program's output went to its files, not the launcher's log

    def test_a_parser_past_its_timeout_is_killed_and_reported(self, docker_client, parser_image):
        """The launcher kills the program at the timeout and says so in the status."""
        _, frame = _run(docker_client, parser_image, """
            import time
            def parse(path):
                time.sleep(60)
        """, timeout_seconds=2)
        assert frame.timed_out

    def test_stdout_is_capped_and_counted(self, docker_client, parser_image):
        """10 MB printed: output_bytes kept, the total counted."""
        _, frame = _run(docker_client, parser_image, """
            import sys
            def parse(path):
                sys.stdout.write("x" * 10_000_000)
                raise ValueError("no table")
        """, output_bytes=65536)
        stdout = frame.streams["stdout"]
        assert len(stdout.data) == 65536 and stdout.total_bytes == 10_000_000 and stdout.truncated
        assert frame.exit_code == 1
        assert "ValueError" in frame.streams["stderr"].text

    def test_a_memory_hog_is_reported_as_oom(self, docker_client, parser_image):
        """Past the container's memory limit the kernel kills the parser; the launcher sees the OOM kill."""
        run, frame = _run(docker_client, parser_image, """
            def parse(path):
                chunks = []
                while True:
                    chunks.append(bytearray(16 * 1024 * 1024))
        """, memory_mb=128)
        assert frame.oom_killed or run.program_oom
        assert frame.exit_code == 137
