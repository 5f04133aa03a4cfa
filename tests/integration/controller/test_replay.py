"""Replay through the real CLI and engine: a stored attempt run again in a fresh sandbox
gives the same outcome; after the target's PDF changed, a different one, shown as a diff."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.corpus.generate import generate
from tests.integration.controller.test_resume import cli

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")


class TestReplay:
    def test_same_outcome_then_a_different_one_after_the_pdf_changed(self, tmp_path, icici_copy):
        """replay exits 0 with SAME; once the PDF is another statement, exits 1 with DIFFERENT and a diff."""
        run = cli(tmp_path, icici_copy, "run", "--target", "icici")
        assert run.returncode == 0, run.stdout + run.stderr
        run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", run.stdout, re.M)[1]

        same = cli(tmp_path, icici_copy, "replay", run_id)
        assert same.returncode == 0, same.stdout + same.stderr
        assert "SAME: attempt 1's parser.py gives the recorded outcome" in same.stdout
        assert "timeout 120 s" in same.stdout  # the run's recorded limits

        (other,) = generate(tmp_path / "corpus", 7, names=("aldermoor",))
        (pdf,) = (icici_copy / "icici").glob("*.pdf")
        shutil.copyfile(other.folder / "statement.pdf", pdf)
        different = cli(tmp_path, icici_copy, "replay", run_id, "--attempt", "1")
        assert different.returncode == 1, different.stdout + different.stderr
        out = different.stdout
        assert "DIFFERENT: attempt 1's parser.py no longer gives the recorded outcome" in out
        assert "note: the target's PDF changed since the run" in out
        assert re.search(r"^-result_sha256: ", out, re.M) or re.search(r"^-failure: null", out, re.M), out
        assert "--- recorded" in out and "+++ replayed" in out

    def test_replay_of_an_attempt_that_does_not_exist(self, tmp_path, icici_copy):
        """--attempt beyond the run's attempts is one line and exit 2."""
        run = cli(tmp_path, icici_copy, "run", "--target", "icici")
        run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", run.stdout, re.M)[1]
        missing = cli(tmp_path, icici_copy, "replay", run_id, "--attempt", "7")
        assert missing.returncode == 2 and "attempt 7" in missing.stderr
