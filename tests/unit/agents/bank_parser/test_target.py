"""Target resolution: every user mistake becomes a TargetError with a helpful message."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.bank_parser.target import resolve_target
from agents.ports.errors import TargetError
from agents.targets import known_targets
from tests.conftest import ICICI


@pytest.fixture
def data(tmp_path: Path) -> Path:
    shutil.copytree(ICICI, tmp_path / "icici")
    return tmp_path


class TestResolveTarget:
    def test_finds_pdf_and_expected_csv(self, data):
        """A good target yields its single PDF and its result.csv."""
        target = resolve_target("icici", data)
        assert target.pdf.name == "icici sample.pdf"
        assert target.expected_csv == data / "icici" / "result.csv"

    @pytest.mark.parametrize("name", ["../x", "a/b", ".", "..", "", "-rf", "x y", "a\\b"])
    def test_rejects_names_that_are_not_plain(self, data, name):
        """Path-like or odd names are refused before any file is touched."""
        with pytest.raises(TargetError, match="not a target name"):
            resolve_target(name, data)

    def test_unknown_target_lists_the_known_ones(self, data):
        """An unknown name says which targets exist."""
        with pytest.raises(TargetError) as info:
            resolve_target("sbi", data)
        assert "icici" in info.value.one_line()

    def test_missing_pdf(self, data):
        """A folder without a PDF is an input error."""
        (data / "icici" / "icici sample.pdf").unlink()
        with pytest.raises(TargetError, match="no statement PDF"):
            resolve_target("icici", data)

    def test_several_pdfs(self, data):
        """Two PDFs are ambiguous and refused."""
        shutil.copy(data / "icici" / "icici sample.pdf", data / "icici" / "other.pdf")
        with pytest.raises(TargetError, match="several PDFs"):
            resolve_target("icici", data)

    def test_corrupt_pdf(self, data):
        """A file that is not a PDF is refused by its header."""
        (data / "icici" / "icici sample.pdf").write_bytes(b"GIF89a not a pdf")
        with pytest.raises(TargetError, match="not a PDF"):
            resolve_target("icici", data)

    def test_without_result_csv_the_target_has_no_expectation(self, data):
        """result.csv is optional."""
        (data / "icici" / "result.csv").unlink()
        assert resolve_target("icici", data).expected_csv is None

    def test_known_targets(self, data):
        """Known targets are the plainly named folders."""
        (data / "not a target").mkdir()
        assert known_targets(data) == ["icici"]
