"""Finding submissions and classes, their parser, and the archive of their modules."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agents.bank_parser.submissions import (
    find_parser,
    find_submissions,
    git_commit_date,
    module_archive,
)
from agents.ports.errors import TargetError
from controller.platform.environments.image import CONTEXT_FILES
from controller.platform.settings import PROJECT_ROOT

FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "env_submissions"


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TestDiscovery:
    def test_a_folder_of_submissions_is_a_class(self):
        """Each member with requirements.txt / pyproject.toml / custom_parsers/ is one submission."""
        found = find_submissions([str(FIXTURES)], "icici")
        assert [s.name for s in found] == ["a_pypdf2_old_pandas", "b_helper_module", "c_unresolvable",
                                           "d_no_requirements", "e_looks_for_the_answer"]
        assert found[0].declared.python == ("pandas==2.2.3", "PyPDF2")
        assert found[3].declared.empty

    def test_one_submission_folder(self):
        """A submission folder given directly is one submission, its helper modules not parsers."""
        (found,) = find_submissions([str(FIXTURES / "b_helper_module")], "icici")
        assert found.parser == FIXTURES / "b_helper_module" / "custom_parsers" / "icici_parser.py"

    def test_plain_parser_folders_are_not_submissions(self, tmp_path):
        """A folder of plain .py parsers keeps the old behaviour (None: not submissions)."""
        write(tmp_path / "a.py", "def parse(p): pass\n")
        assert find_submissions([str(tmp_path)], "icici") is None

    def test_mixing_submissions_and_plain_files_is_refused(self, tmp_path):
        """Submissions and plain parser files in one call: one clear error."""
        write(tmp_path / "a.py")
        with pytest.raises(TargetError, match="not a submission folder"):
            find_submissions([str(FIXTURES / "d_no_requirements"), str(tmp_path / "a.py")], "icici")


class TestFindParser:
    def test_the_targets_parser_wins(self, tmp_path):
        """custom_parsers/<target>_parser.py is chosen over other *_parser.py files."""
        write(tmp_path / "custom_parsers" / "base_parser.py")
        wanted = write(tmp_path / "custom_parsers" / "icici_parser.py")
        assert find_parser(tmp_path, "icici") == (wanted, "")

    def test_the_only_parser_file(self, tmp_path):
        """Without the target's name, the one *_parser.py is the parser."""
        only = write(tmp_path / "src" / "bank_parser.py")
        assert find_parser(tmp_path, "icici") == (only, "")

    def test_ambiguity_and_absence_are_explained(self, tmp_path):
        """Several candidates or none: no parser, and why."""
        assert "no custom_parsers/icici_parser.py" in find_parser(tmp_path, "icici")[1]
        write(tmp_path / "a_parser.py")
        write(tmp_path / "b_parser.py")
        assert find_parser(tmp_path, "icici")[0] is None


class TestArchive:
    def test_modules_at_their_paths_and_the_parsers_siblings_at_the_top(self):
        """utils/pdf.py and custom_parsers/common.py keep their paths; common.py is also top-level."""
        (sub,) = find_submissions([str(FIXTURES / "b_helper_module")], "icici")
        names = zipfile.ZipFile(io.BytesIO(module_archive(sub))).namelist()
        assert {"utils/pdf.py", "utils/__init__.py", "custom_parsers/common.py", "common.py"} <= set(names)

    def test_hidden_venv_and_symlinked_files_stay_out(self, tmp_path):
        """.git, venv folders and symlinks (maybe to host files) are not packed."""
        write(tmp_path / "requirements.txt", "pandas\n")
        write(tmp_path / "custom_parsers" / "icici_parser.py", "def parse(p): pass\n")
        write(tmp_path / ".git" / "hook.py")
        write(tmp_path / "venv" / "lib.py")
        secret = write(tmp_path.parent / "outside.py", "SECRET = 1\n")
        (tmp_path / "link.py").symlink_to(secret)
        (sub,) = find_submissions([str(tmp_path)], "icici")
        names = zipfile.ZipFile(io.BytesIO(module_archive(sub))).namelist()
        assert sorted(names) == ["custom_parsers/icici_parser.py", "icici_parser.py"]

    def test_the_finder_imports_from_the_archive_after_the_standard_library(self, tmp_path):
        """The image's finder serves the submission's own modules, never shadows the stdlib."""
        (sub,) = find_submissions([str(FIXTURES / "b_helper_module")], "icici")
        archive = tmp_path / "submission.zip"
        archive.write_bytes(module_archive(sub))
        with zipfile.ZipFile(archive, "a") as extra:
            extra.writestr("json.py", "raise SystemExit('shadowed')\n")
        script = (
            "import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('f', {str(CONTEXT_FILES['sandloop_submission.py'])!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            f"spec.loader.exec_module(module); module.ARCHIVE = {str(archive)!r}\n"
            "import json, custom_parsers.common, common\n"
            "print(common.KIND, custom_parsers.common.__file__.endswith('submission.zip/custom_parsers/common.py'), "
            "json.__file__.startswith(sys.base_prefix) or 'python3' in json.__file__)\n"
        )
        proc = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, check=False)
        assert proc.stdout.split() == ["statement", "True", "True"], proc.stderr


class TestCommitDate:
    def test_a_git_checkout_gives_its_last_commit_date(self, tmp_path):
        """The folder's last commit date is the date its requirements resolve as of."""
        env = {"GIT_AUTHOR_DATE": "2025-08-20T12:00:00+00:00", "GIT_COMMITTER_DATE": "2025-08-20T12:00:00+00:00",
               "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
        write(tmp_path / "requirements.txt", "pandas\n")
        for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"]):
            subprocess.run(["git", "-C", str(tmp_path), *command], env=env, check=True)
        assert git_commit_date(tmp_path) == "2025-08-20T12:00:00Z"

    def test_not_a_checkout_has_no_date(self, tmp_path):
        """Without .git there is no date (the resolution is as of now, unless --as-of)."""
        assert git_commit_date(tmp_path) is None
