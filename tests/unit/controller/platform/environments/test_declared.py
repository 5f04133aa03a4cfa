"""What a submission declares: only index requirements survive, options and URLs are dropped."""

from __future__ import annotations

import pytest

from agents.ports.environments import (
    DeclaredEnv,
    declared_from_lists,
    parse_requirements,
    pyproject_dependencies,
    read_declared,
)


class TestParseRequirements:
    def test_keeps_plain_and_pinned_requirements_sorted_and_unique(self):
        """Names and pins are kept, normalised, sorted case-insensitively, once each."""
        kept, dropped = parse_requirements("pandas==2.2.3\nPyPDF2\n# comment\n\npdfplumber>=0.11 # why\nPyPDF2\n")
        assert kept == ["pandas==2.2.3", "pdfplumber>=0.11", "PyPDF2"]
        assert dropped == []

    def test_drops_options_urls_and_local_paths(self):
        """-r, -e, --index-url, git URLs and local paths never reach the resolver."""
        text = "-r other.txt\n-e .\n--index-url http://evil/simple\ngit+https://x/y.git\n./local\nfoo @ https://x/foo.whl\npandas\n"
        kept, dropped = parse_requirements(text)
        assert kept == ["pandas"]
        assert len(dropped) == 6

    def test_keeps_markers(self):
        """Environment markers are kept for the resolver to evaluate for the image's platform."""
        kept, _ = parse_requirements('pywin32; sys_platform == "win32"\n')
        assert kept == ['pywin32; sys_platform == "win32"']


class TestPyproject:
    def test_project_dependencies(self):
        """[project].dependencies is the declaration."""
        assert pyproject_dependencies('[project]\nname="x"\ndependencies=["pandas<3", "pypdf"]\n') == [
            "pandas<3", "pypdf"]

    def test_poetry_names_without_python(self):
        """Poetry's table gives names (its caret versions are not PEP 440); python is not a package."""
        text = '[tool.poetry.dependencies]\npython="^3.10"\npandas="^2.0"\nPyMuPDF="*"\n'
        assert pyproject_dependencies(text) == ["pandas", "PyMuPDF"]

    def test_broken_toml_declares_nothing(self):
        """An unreadable pyproject.toml is an empty declaration, not a crash."""
        assert pyproject_dependencies("[project\n") == []


class TestReadDeclared:
    def test_requirements_txt_wins_over_pyproject(self, tmp_path):
        """requirements.txt is read first; the source says which file it was."""
        (tmp_path / "requirements.txt").write_text("PyPDF2\n")
        (tmp_path / "pyproject.toml").write_text('[project]\ndependencies=["camelot-py"]\n')
        assert read_declared(tmp_path) == DeclaredEnv(("PyPDF2",), (), "requirements.txt")

    def test_a_utf16_requirements_file_is_read(self, tmp_path):
        """A Windows `pip freeze > requirements.txt` (UTF-16 with BOM) is understood."""
        (tmp_path / "requirements.txt").write_bytes("pandas==2.2.3\r\ncamelot-py\r\n".encode("utf-16"))
        assert read_declared(tmp_path).python == ("camelot-py", "pandas==2.2.3")

    def test_a_symlinked_requirements_file_is_not_followed(self, tmp_path):
        """A requirements.txt that is a symlink (maybe to a host file) is ignored."""
        (tmp_path / "real.txt").write_text("pandas\n")
        (tmp_path / "requirements.txt").symlink_to(tmp_path / "real.txt")
        assert read_declared(tmp_path).empty

    def test_debian_names_are_validated(self):
        """A target's Debian packages must be package names, not shell."""
        assert declared_from_lists(["camelot-py"], ["ghostscript"], "target.toml").debian == ("ghostscript",)
        with pytest.raises(ValueError):
            declared_from_lists([], ["gs; rm -rf /"], "target.toml")
