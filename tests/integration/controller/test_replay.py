"""Replay through the real CLI and engine: a stored attempt run again in a fresh sandbox
gives the same outcome; after the target's PDF changed, a different one, shown as a diff.
One finished run (module-scoped: each full run costs a container start and an analysis)
serves every test here."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ICICI
from tests.corpus.generate import generate
from tests.integration.controller.test_resume import cli

pytestmark = pytest.mark.usefixtures("no_leftovers")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, parser_image) -> tuple[Path, Path, str]:  # noqa: ANN001
    """(working folder, data folder, run id) of a passed ICICI run."""
    root = tmp_path_factory.mktemp("replay")
    data = root / "data"
    shutil.copytree(ICICI, data / "icici")
    run = cli(root, data, "run", "--target", "icici")
    assert run.returncode == 0, run.stdout + run.stderr
    return root, data, re.search(r"^==> run ([A-Za-z0-9_-]+): ", run.stdout, re.M)[1]


class TestReplay:
    def test_same_outcome(self, finished_run):
        """replay of the last attempt exits 0 with SAME, under the run's recorded limits."""
        root, data, run_id = finished_run
        same = cli(root, data, "replay", run_id)
        assert same.returncode == 0, same.stdout + same.stderr
        assert "SAME: attempt 1's parser.py gives the recorded outcome" in same.stdout
        assert "timeout 120 s" in same.stdout  # the run's recorded limits

    def test_different_outcome_after_the_pdf_changed(self, finished_run, tmp_path):
        """With another statement in place of the PDF, replay exits 1 with DIFFERENT and a diff."""
        root, data, run_id = finished_run
        (other,) = generate(tmp_path / "corpus", 7, names=("aldermoor",))
        (pdf,) = (data / "icici").glob("*.pdf")
        shutil.copyfile(pdf, tmp_path / "original.pdf")
        shutil.copyfile(other.folder / "statement.pdf", pdf)
        try:
            different = cli(root, data, "replay", run_id, "--attempt", "1")
        finally:
            shutil.copyfile(tmp_path / "original.pdf", pdf)
        out = different.stdout
        assert different.returncode == 1, out + different.stderr
        assert "DIFFERENT: attempt 1's parser.py no longer gives the recorded outcome" in out
        assert "note: the target's PDF changed since the run" in out
        assert re.search(r"^-result_sha256: ", out, re.M) or re.search(r"^-failure: null", out, re.M), out
        assert "--- recorded" in out and "+++ replayed" in out

    def test_an_attempt_that_does_not_exist(self, finished_run):
        """--attempt beyond the run's attempts is one line and exit 2."""
        root, data, run_id = finished_run
        missing = cli(root, data, "replay", run_id, "--attempt", "7")
        assert missing.returncode == 2 and "attempt 7" in missing.stderr

    def test_a_finished_run_is_not_resumed(self, finished_run):
        """--resume of a run that finished is one line and exit 2."""
        root, data, run_id = finished_run
        again = cli(root, data, "run", "--resume", run_id)
        assert again.returncode == 2 and "already finished" in again.stderr
