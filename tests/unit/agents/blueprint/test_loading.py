"""Blueprints are user input: bounded, validated, and every mistake is one line (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agents.blueprint.loading import load_target, parse_blueprint
from agents.blueprint.model import Blueprint
from agents.ports.errors import ConfigError, TargetError
from controller.platform.settings import PROJECT_ROOT

ACME = PROJECT_ROOT / "data" / "acme-research"


def acme(tmp_path: Path, **changes: object) -> Path:
    """A copy of the acme-research target with top-level blueprint keys changed."""
    folder = tmp_path / "acme"
    shutil.copytree(ACME, folder)
    document = json.loads((folder / "blueprint.json").read_text())
    document.update(changes)
    (folder / "blueprint.json").write_text(json.dumps(document))
    return folder


def error_of(tmp_path: Path, **changes: object) -> str:
    acme(tmp_path, **changes)
    with pytest.raises(ConfigError) as info:
        load_target(tmp_path, "acme")
    line = info.value.one_line()
    assert "\n" not in line
    return line


class TestExamples:
    @pytest.mark.parametrize("name", ["acme-research", "candidate-brief", "market-scan"])
    def test_the_examples_validate(self, name):
        """Every example in data/ loads, with the data files its tools and validators name."""
        target = load_target(PROJECT_ROOT / "data", name)
        assert target.blueprint.name == name
        assert set(target.data) == set(target.blueprint.data_files())


class TestOneLineErrors:
    def test_too_many_sections(self, tmp_path):
        """More than 20 sections: the field and the bound, in one line."""
        sections = [{"title": f"S{i}"} for i in range(21)]
        assert "sections: List should have at most 20 items" in error_of(tmp_path, sections=sections)

    def test_too_many_tools(self, tmp_path):
        tools = [{"name": f"t{i}", "files": ["company.json"]} for i in range(11)]
        assert "tools: List should have at most 10 items" in error_of(tmp_path, tools=tools)

    def test_an_overlong_title(self, tmp_path):
        assert "title: String should have at most 120 characters" in error_of(tmp_path, title="x" * 121)

    def test_a_quote_in_a_section_title(self, tmp_path):
        """Section titles are quoted in the lessons' fixes, so they may not hold a quote (titles may)."""
        line = error_of(tmp_path, title="Acme's report", sections=[{"title": "Acme's risks"}])
        assert "sections.0.title: must not contain a quote" in line

    def test_code_too_long(self, tmp_path):
        tools = [{"name": "big", "files": [], "code": "x = 1\n" * 5000}]
        assert "tools.0.code: String should have at most 20000 characters" in error_of(tmp_path, tools=tools)

    def test_a_section_naming_an_unknown_tool(self, tmp_path):
        line = error_of(tmp_path, sections=[{"title": "Overview", "tools": ["nope"]}])
        assert "section 'Overview' uses unknown tool(s): nope" in line

    def test_a_tool_without_code_needs_one_file(self, tmp_path):
        line = error_of(tmp_path, tools=[{"name": "two", "files": ["a.json", "b.json"]}], sections=[{"title": "A"}])
        assert "without code must name exactly one file" in line

    def test_a_data_file_with_a_path_is_refused(self, tmp_path):
        line = error_of(tmp_path, tools=[{"name": "etc", "files": ["../../etc/passwd"]}], sections=[{"title": "A"}])
        assert "is not a plain file name" in line

    def test_unknown_keys_are_refused(self, tmp_path):
        assert "extra" in error_of(tmp_path, surprise=1).lower()

    def test_not_json(self, tmp_path):
        with pytest.raises(ConfigError, match="is not a valid blueprint: not valid JSON"):
            parse_blueprint(b'{"name": ', tmp_path / "blueprint.json")

    def test_deep_nesting_is_refused_before_parsing(self, tmp_path):
        with pytest.raises(ConfigError, match="nested"):
            parse_blueprint(b"{\"a\":" + b"[" * 5000 + b"]" * 5000 + b"}", tmp_path / "blueprint.json")

    def test_an_oversized_blueprint(self, tmp_path):
        folder = acme(tmp_path)
        (folder / "blueprint.json").write_bytes(b" " * (300 * 1024) + b"{}")
        with pytest.raises(TargetError, match="larger than 256 KiB"):
            load_target(tmp_path, "acme")

    def test_a_missing_data_file(self, tmp_path):
        folder = acme(tmp_path)
        (folder / "news.json").unlink()
        with pytest.raises(TargetError, match="names data file 'news.json', which is not a file"):
            load_target(tmp_path, "acme")


class TestNaturalLanguage:
    def test_offline_says_only_json_works(self, tmp_path):
        """A prose blueprint without an LLM: one line saying only JSON blueprints work offline."""
        folder = acme(tmp_path)
        (folder / "blueprint.json").unlink()
        (folder / "blueprint.md").write_text("Write a research report on Acme Corp with three sections.\n")
        with pytest.raises(ConfigError, match="without an LLM only JSON blueprints work offline"):
            load_target(tmp_path, "acme")

    def test_prose_in_blueprint_json_is_the_same_message(self, tmp_path):
        folder = acme(tmp_path)
        (folder / "blueprint.json").write_text("Research Acme Corp and write a report.")
        with pytest.raises(ConfigError, match="natural-language blueprint: without an LLM"):
            load_target(tmp_path, "acme")

    def test_with_a_prose_parser_the_prose_and_the_data_files_go_to_it(self, tmp_path):
        """With an LLM configured, the prose and the folder's data file names go to its parser."""
        folder = acme(tmp_path)
        (folder / "blueprint.json").unlink()
        (folder / "blueprint.txt").write_text("Research Acme Corp.")
        given = []

        def parse(prose: str, files: list[str], source: Path) -> Blueprint:
            given.append((prose, files, source.name))
            return load_target(PROJECT_ROOT / "data", "acme-research").blueprint

        target = load_target(tmp_path, "acme", prose=parse)
        assert given == [("Research Acme Corp.", ["company.json", "financials.csv", "news.json"], "blueprint.txt")]
        assert target.blueprint.name == "acme-research" and set(target.data) == {"company.json", "financials.csv",
                                                                                "news.json"}
