"""target.toml: valid files load, bad ones are one line (ConfigError, exit 2), documents resolve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.ports.errors import ConfigError, TargetError
from agents.targets import load_target_config, resolve_document_target
from controller.platform.settings import PROJECT_ROOT

GOOD = 'agent = "idris"\nproject = "ServiceContract"\ndocument_type = "contract"\n'


def target(tmp_path: Path, toml: str | None, *files: str) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    if toml is not None:
        (folder / "target.toml").write_text(toml, encoding="utf-8")
    for name in files:
        (folder / name).write_text("x", encoding="utf-8")
    return tmp_path


class TestLoading:
    def test_the_shipped_sample_target(self):
        """data/service-contract declares the idris agent, its project and its PDF."""
        config = load_target_config(PROJECT_ROOT / "data", "service-contract")
        assert config is not None and config.agent == "idris" and config.project == "ServiceContract"
        assert config.document == "service_contract.pdf" and config.limits.max_attempts == 5

    def test_no_file_means_no_config(self, tmp_path):
        """A target without target.toml is a bank-statement target, as before."""
        assert load_target_config(target(tmp_path, None), "t") is None
        assert load_target_config(tmp_path, "missing") is None

    def test_a_conversation_names_its_subject_and_what_it_follows(self, tmp_path):
        """subject (normalised like --subject) and follows (a target's name) are keys of an intake target."""
        toml = 'agent = "intake"\ngoal = "g"\nsubject = "Maria   Silva"\nfollows = "intake-day1"\n'
        config = load_target_config(target(tmp_path, toml), "t")
        assert config is not None and (config.subject, config.follows) == ("Maria Silva", "intake-day1")

    def test_limits_are_optional(self, tmp_path):
        """Unset limits stay None (the settings decide)."""
        config = load_target_config(target(tmp_path, GOOD + "[limits]\ntimeout_seconds = 12\n"), "t")
        assert config is not None and config.limits.timeout_seconds == 12 and config.limits.max_attempts is None

    @pytest.mark.parametrize(("toml", "fragment"), [
        ('agent = "idris"\n', "needs project"),
        ('agent = "idris"\nproject = "service contract"\n', "project"),
        ('agent = "idris"\nproject = "Money"\n', "clashes"),
        (GOOD + 'colour = "red"\n', "colour"),
        (GOOD + "[limits]\nmax_attempts = 0\n", "limits.max_attempts"),
        ('agent = "haskell"\n', "agent"),
        (GOOD + 'document = "../secret.pdf"\n', "document"),
        ('agent = "bank_parser"\nproject = "X"\n', 'agent = "idris" only'),
        ("agent = idris\n", "not valid TOML"),
        (GOOD + 'follows = "intake-day1"\n', 'subject and follows apply to agent = "intake" only'),
        ('agent = "intake"\ngoal = "g"\nsubject = "../../etc"\n', "subject: '../../etc' is not a subject name"),
        ('agent = "intake"\ngoal = "g"\nfollows = "../day1"\n', "follows: '../day1' is not a target name"),
        ('agent = "intake"\ngoal = "g"\nfollows = ["a", "b"]\n', "follows"),
    ])
    def test_a_bad_file_is_one_line(self, tmp_path, toml, fragment):
        """Each mistake: ConfigError naming the file and the key, exit 2, no traceback text."""
        with pytest.raises(ConfigError) as caught:
            load_target_config(target(tmp_path, toml), "t")
        line = caught.value.one_line()
        assert caught.value.exit_code == 2 and "\n" not in line
        assert "target.toml" in line and fragment in line

    def test_a_bad_target_name_is_refused_before_reading(self, tmp_path):
        """Slashes in the name: TargetError, as for every target."""
        with pytest.raises(TargetError):
            load_target_config(tmp_path, "../etc")


class TestDocuments:
    def test_the_one_document_is_found(self, tmp_path):
        """Without `document`, the folder's single .pdf/.txt/.md is it."""
        data = target(tmp_path, GOOD, "contract.txt", "notes.csv")
        config = load_target_config(data, "t")
        assert config is not None
        assert resolve_document_target("t", data, config).document.name == "contract.txt"

    def test_several_documents_need_a_name(self, tmp_path):
        """Two candidates: the error says how to pick one."""
        data = target(tmp_path, GOOD, "a.pdf", "b.md")
        config = load_target_config(data, "t")
        assert config is not None
        with pytest.raises(TargetError) as caught:
            resolve_document_target("t", data, config)
        assert 'document = "a.pdf"' in caught.value.one_line()

    def test_a_named_document_must_exist(self, tmp_path):
        """`document` naming a missing file is a TargetError."""
        data = target(tmp_path, GOOD + 'document = "gone.pdf"\n')
        config = load_target_config(data, "t")
        assert config is not None
        with pytest.raises(TargetError, match="gone.pdf"):
            resolve_document_target("t", data, config)

    def test_no_document_at_all(self, tmp_path):
        """An empty folder: TargetError saying what to put there."""
        data = target(tmp_path, GOOD)
        config = load_target_config(data, "t")
        assert config is not None
        with pytest.raises(TargetError, match="no document"):
            resolve_document_target("t", data, config)


class TestCli:
    """`python -m controller run` on idris targets that are wrong: one line, exit 2, nothing written.

    Each mistake is caught before the engine is contacted, so these need no Docker."""

    def run(self, data: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"),
               "SBX_IDRIS_DIR": str(tmp_path / "idris")}
        return subprocess.run([sys.executable, "-m", "controller", "run", "--target", "t"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120, check=False)

    def assert_one_line(self, proc: subprocess.CompletedProcess[str], tmp_path: Path, needle: str) -> None:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
        assert "Traceback" not in proc.stderr and not (tmp_path / "runs").exists()

    def test_a_bad_target_toml(self, tmp_path):
        """An unknown key in target.toml."""
        data = target(tmp_path, GOOD + "colour = 1\n", "doc.txt")
        self.assert_one_line(self.run(data, tmp_path), tmp_path, "colour")

    def test_an_image_document(self, tmp_path):
        """A scan: images are a later step."""
        data = target(tmp_path, GOOD, "scan.png")
        self.assert_one_line(self.run(data, tmp_path), tmp_path, "OCR")

    def test_a_corrupt_pdf(self, tmp_path):
        """A .pdf that is not one."""
        data = target(tmp_path, GOOD, "contract.pdf")
        self.assert_one_line(self.run(data, tmp_path), tmp_path, "cannot read contract.pdf as a PDF")


class TestHostileFiles:
    @pytest.mark.parametrize("toml", ["a = " + "[" * 20_000 + "]" * 20_000, "a = " + "{b=" * 5000 + "1" + "}" * 5000])
    def test_deep_nesting_is_a_config_error(self, tmp_path, toml):
        """Regression (make fuzz): tomllib's RecursionError on deep nesting is now a ConfigError (exit 2)."""
        with pytest.raises(ConfigError, match="too deeply"):
            load_target_config(target(tmp_path, toml), "t")

    def test_an_oversized_file_is_refused_unread(self, tmp_path):
        """A target.toml over 64 KiB is refused before parsing."""
        with pytest.raises(ConfigError, match="larger than"):
            load_target_config(target(tmp_path, "#" * 70_000), "t")


class TestFuzzedFiles:
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.decoders import TOML_INPUTS

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(TOML_INPUTS)
    def test_any_file_loads_or_is_a_config_error(self, toml):
        """Any target.toml: a TargetConfig, or ConfigError/TargetError, nothing else."""
        from tests.fuzz.decoders import check_toml

        check_toml(toml)
