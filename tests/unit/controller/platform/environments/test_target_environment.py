"""``[environment]`` of target.toml (issue 13): good tables load, bad ones are one line and exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents.ports.environments import DeclaredEnv
from agents.ports.errors import ConfigError
from agents.targets import load_target_config
from controller.platform.settings import PROJECT_ROOT


def target(tmp_path: Path, toml: str) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "target.toml").write_text(toml, encoding="utf-8")
    return tmp_path


class TestTable:
    def test_a_full_table(self, tmp_path):
        """Requirements (normalised, sorted), Debian packages (sorted) and the date reach the declaration."""
        toml = ('[environment]\npython = ["pandas>=2.2,<2.3", "PyPDF2==3.0.1"]\n'
                'debian = ["tesseract-ocr", "ghostscript"]\nas_of = "2025-08-31"\n')
        config = load_target_config(target(tmp_path, toml), "t")
        assert config is not None and config.environment is not None
        assert config.environment.as_of == "2025-08-31"
        declared = config.environment.declared()
        assert declared == DeclaredEnv(("pandas<2.3,>=2.2", "PyPDF2==3.0.1"), ("ghostscript", "tesseract-ocr"),
                                       "target.toml")

    def test_every_key_is_optional(self, tmp_path):
        config = load_target_config(target(tmp_path, "[environment]\n"), "t")
        assert config is not None and config.environment is not None and config.environment.declared().empty

    def test_no_table_means_no_environment(self, tmp_path):
        config = load_target_config(target(tmp_path, "[limits]\nmax_attempts = 2\n"), "t")
        assert config is not None and config.environment is None

    def test_a_timestamp_is_normalised_to_utc(self, tmp_path):
        config = load_target_config(target(tmp_path, '[environment]\nas_of = "2025-08-31T12:00:00+02:00"\n'), "t")
        assert config is not None and config.environment is not None
        assert config.environment.as_of == "2025-08-31T10:00:00Z"

    @pytest.mark.parametrize(("body", "fragment"), [
        ('python = ["pandas >>> 2"]', "not a PEP 508 requirement"),
        ('python = ["pkg @ https://example.com/p.whl"]', "not URLs"),
        ('python = ["-e ."]', "not a PEP 508 requirement"),
        ('python = "PyPDF2"', "python"),
        ('debian = ["Ghostscript"]', "not a Debian package name"),
        ('debian = ["gs; rm -rf /"]', "not a Debian package name"),
        ('debian = ["-y"]', "not a Debian package name"),
        ('debian = ["a"]', "not a Debian package name"),
        ('as_of = "last summer"', "not a date"),
        ('as_of = 2025-08-31', "as_of"),
        ('pip = ["x"]', "pip"),
    ])
    def test_a_bad_value_is_a_one_line_config_error(self, tmp_path, body, fragment):
        with pytest.raises(ConfigError) as raised:
            load_target_config(target(tmp_path, f"[environment]\n{body}\n"), "t")
        line = raised.value.one_line()
        assert fragment in line and "\n" not in line and "environment" in line
        assert "docs/environments.md" in line

    def test_idris_targets_take_no_environment(self, tmp_path):
        toml = 'agent = "idris"\nproject = "Lease"\n[environment]\npython = ["PyPDF2"]\n'
        with pytest.raises(ConfigError, match="bank_parser"):
            load_target_config(target(tmp_path, toml), "t")


def test_run_refuses_a_bad_table_in_one_line_before_the_engine(tmp_path):
    """`controller run` on a copied ICICI target whose [environment] is wrong: exit 2, one line."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / "icici", data / "icici")
    (data / "icici" / "target.toml").write_text('[environment]\ndebian = ["Bad Name"]\n', encoding="utf-8")
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"), "DOCKER_HOST": "tcp://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--target", "icici"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a Debian package name" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "runs").exists()
