"""Hostile outputs against the host: the /work area is bounded by the kernel, collection by a cap.

Pins (issue #11, the execution lifecycle's part): a program cannot write more than
``output_area_mb`` under /work (it gets ENOSPC; the host's disk sees nothing, the area is a
tmpfs); a result name that is a big folder, a link, or a file over the cap is refused with a
reason and never read into the controller's memory; nothing is left behind in any case.
"""

from __future__ import annotations

import json
import textwrap
import tracemalloc
from collections.abc import Iterator

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxResult, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")

_MiB = 1 << 20

#: Writes 1 MiB files into /work/out/<target> until the kernel refuses; reports what it wrote.
FILLER = """
    import errno, json, os
    target = {target!r}
    os.makedirs(target, exist_ok=True)
    written, error = 0, None
    block = b"x" * (1 << 20)
    try:
        for index in range(100000):
            with open(os.path.join(target, f"f{{index}}"), "wb") as handle:
                handle.write(block)
            written += len(block)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno, str(exc.errno))
    print(json.dumps({{"written": written, "error": error}}))
"""


@pytest.fixture
def sandbox(docker_client, base_settings) -> Iterator[DockerSandbox]:  # noqa: ANN001
    backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER)
    yield backend
    backend.close()


def run(sandbox: DockerSandbox, image: str, source: str, collect: tuple[str, ...] = (),
        **limits: object) -> SandboxResult:
    spec = SandboxSpec(
        image=image,
        command=("python3", "-I", "-c", textwrap.dedent(source)),
        collect=collect,
        limits=SandboxLimits(**{"timeout_seconds": 60, **limits}),  # type: ignore[arg-type]
        labels={"agent": "pytest"},
    )
    return sandbox.run(spec)


class TestOutputArea:
    def test_writing_past_the_area_fails_with_no_space(self, sandbox, parser_image):
        """A program filling /work/out stops at the area's size with ENOSPC (kernel-enforced)."""
        result = run(sandbox, parser_image, FILLER.format(target="/work/out/junk"), output_area_mb=8)
        report = json.loads(result.stdout.text)
        assert report["error"] == "ENOSPC"
        assert report["written"] <= 8 * _MiB

    def test_a_result_that_is_a_big_folder_is_refused_with_bounded_controller_memory(self, sandbox, parser_image):
        """result.json as a folder filled to the bound: refused by its type, controller memory stays small."""
        tracemalloc.start()
        try:
            result = run(sandbox, parser_image, FILLER.format(target="/work/out/result.json"),
                         collect=("result.json",), output_area_mb=32)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert json.loads(result.stdout.text)["error"] == "ENOSPC"
        assert result.files == {}
        assert "folder" in result.refused_files["result.json"]
        assert peak < 4 * _MiB, f"controller allocated {peak} bytes collecting a 32 MiB folder"

    def test_a_file_over_the_collection_cap_is_refused_unread(self, sandbox, parser_image):
        """A regular result bigger than collect_bytes is refused as too big, not read."""
        source = "open('/work/out/result.json', 'wb').write(b'[' * (3 << 20))"
        tracemalloc.start()
        try:
            result = run(sandbox, parser_image, source, collect=("result.json",), collect_bytes=1 << 20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.files == {} and result.truncated_files == ("result.json",)
        assert "cap" in result.refused_files["result.json"]
        assert peak < 2 * _MiB

    def test_a_hard_link_is_collected_only_as_one_regular_file(self, sandbox, parser_image):
        """A name hard-linked to another output still comes back as exactly its own bytes."""
        source = """
            import os
            open('/work/out/other', 'w').write('x' * 100)
            os.link('/work/out/other', '/work/out/result.json')
        """
        result = run(sandbox, parser_image, source, collect=("result.json",))
        assert result.files == {"result.json": b"x" * 100}

    def test_a_fifo_is_refused(self, sandbox, parser_image):
        """A named pipe under the expected name is refused by its type (reading it would block)."""
        result = run(sandbox, parser_image, "import os; os.mkfifo('/work/out/result.json')", collect=("result.json",))
        assert result.files == {}
        assert "pipe" in result.refused_files["result.json"]

    def test_a_program_that_kills_the_holder_loses_only_its_outputs(self, sandbox, parser_image):
        """Signals to PID 1 (the holder) are ignored; the run ends normally and the outputs come back."""
        source = """
            import os, signal
            open('/work/out/result.json', 'w').write('{}')
            for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGINT):
                try:
                    os.kill(1, sig)
                except OSError as exc:
                    print("refused", exc.errno)
        """
        result = run(sandbox, parser_image, source, collect=("result.json",))
        assert result.exit_code == 0 and result.files == {"result.json": b"{}"}
