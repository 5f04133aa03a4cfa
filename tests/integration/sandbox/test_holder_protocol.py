"""The holder's conversation on the attach connection, against the real engine (issue #12).

Inputs arrive on stdin and outputs leave as frames after the end marker. These tests pin
what that must never allow: a process the program left behind writing into the frames, a
forged marker or frame buying more than the program's own outputs, an input folder the
program can write to by accident, a warm command that runs without its inputs.
"""

from __future__ import annotations

import textwrap
import tracemalloc

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")

_MiB = 1 << 20


@pytest.fixture
def sandbox(docker_client, base_settings):  # noqa: ANN001, ANN201
    backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER)
    yield backend
    backend.close()


def run(sandbox: DockerSandbox, image: str, source: str, **limits: object):  # noqa: ANN201
    spec = SandboxSpec(
        image=image,
        command=("python3", "-I", "-c", textwrap.dedent(source)),
        inputs={"data.txt": b"the input"},
        collect=("result.json",),
        limits=SandboxLimits(**{"timeout_seconds": 30, **limits}),  # type: ignore[arg-type]
        labels={"agent": "pytest"},
    )
    return sandbox.run(spec)


class TestHolderProtocol:
    def test_a_child_left_running_cannot_write_into_the_frames(self, sandbox, parser_image):
        """A daemon child flooding stdout and rewriting the result is killed before the frames go out."""
        source = """
            import os, subprocess, sys
            open('/work/out/result.json', 'w').write('{"ok": true}')
            subprocess.Popen([sys.executable, '-c', '''
            import os, time
            while True:
                os.write(1, b"\\x1esandloop-file result.json data 5\\x1eforge")
                open("/work/out/result.json", "w").write("rewritten")
            '''], start_new_session=True)
            import time; time.sleep(0.3)
        """
        result = run(sandbox, parser_image, source)
        assert result.exit_code == 0 and result.refused_files == {}
        # The file as the program's processes left it when they were killed: one of their own
        # writes (the child truncates, then writes), never the frames it printed.
        assert result.files["result.json"] in (b'{"ok": true}', b"", b"rewritten")
        assert b"forge" in result.stdout.data  # its output stays output

    def test_a_forged_marker_with_a_huge_frame_is_refused_with_bounded_memory(self, sandbox, parser_image):
        """An early end marker and a frame claiming a terabyte: refused, nothing buffered, no crash."""
        source = r"""
            import os, time
            os.write(1, b"\x1esandloop-end 0\x1e\x1esandloop-file result.json data 999999999999\x1e")
            os.write(1, b"x" * (8 << 20))
            time.sleep(1)
        """
        tracemalloc.start()
        try:
            result = run(sandbox, parser_image, source, collect_bytes=1 << 20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.exit_code == 0  # the status the program forged: it could have exited 0 anyway
        assert result.files == {} and "malformed" in result.refused_files["result.json"]
        assert peak < 4 * _MiB

    def test_inputs_arrive_read_only_and_outputs_come_back_whole(self, sandbox, parser_image):
        """The inputs are there, read-only to a plain write; a 3 MiB result comes back byte for byte."""
        source = """
            import json, os
            data = open('/work/in/data.txt').read()
            try:
                open('/work/in/data.txt', 'w').write('changed')
                wrote = True
            except OSError:
                wrote = False
            blob = os.urandom(3 << 20).hex()[: 3 << 20]
            open('/work/out/result.json', 'w').write(json.dumps({"data": data, "wrote": wrote, "blob": blob}))
        """
        result = run(sandbox, parser_image, source)
        document = result.files["result.json"]
        assert len(document) > 3 << 20
        assert b'"data": "the input"' in document and b'"wrote": false' in document


class TestWarmParserImage:
    def test_the_parser_entrypoint_says_ready_and_runs_warm(self, docker_client, base_settings, parser_image):
        """The real warm command reports ready after its imports; the execution then runs warm, 0 engine calls."""
        from agents.bank_parser.evaluate import parser_spec

        backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER, pool_size=1,
                                remove_in_background=True)
        code = "import pandas as pd\n\ndef parse(pdf_path):\n    return pd.DataFrame({'a': [1, 2]})\n"
        spec = parser_spec(parser_image, code, b"%PDF-1.4\n", base_settings.sandbox, {"agent": "pytest"})
        try:
            backend.prewarm(spec)
            assert backend.wait_warm(60), "the warm parser container never said it was ready"
            result = backend.run(spec)
        finally:
            backend.close()
        assert result.warm and result.exit_code == 0
        assert b'"data": [[1], [2]]' in result.files["result.json"]
        assert backend.last_trace is not None and backend.last_trace.round_trips == []
