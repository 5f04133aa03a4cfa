"""The prompts list exactly what the parser image installs, read from requirements.in."""

from __future__ import annotations

from agents.bank_parser.coders.llm_prompts import PROMPTS, _system
from agents.bank_parser.installed import REQUIREMENTS_IN, installed_libraries, libraries_line
from agents.ports.images import pin_requirements


class TestInstalledLibraries:
    def test_every_pinned_requirement_is_listed(self):
        """Each requirement the image build installs (but pip) is in the list, with its pin."""
        pins = [p for p in pin_requirements(REQUIREMENTS_IN) if not p.startswith("pip")]
        assert [lib.requirement for lib in installed_libraries()] == pins

    def test_import_names_come_from_the_comment_or_the_name(self):
        """PyMuPDF is imported as fitz/pymupdf (comment); PyPDF2 keeps its case; pdfminer.six is pdfminer."""
        imports = {lib.requirement.split("==")[0]: lib.imports for lib in installed_libraries()}
        assert imports["PyMuPDF"] == ("fitz", "pymupdf")
        assert imports["PyPDF2"] == ("PyPDF2",)
        assert imports["pdfminer.six"] == ("pdfminer",)

    def test_a_new_line_in_requirements_in_reaches_the_prompt(self, tmp_path):
        """A library added to requirements.in appears in the prompt's line with no second edit."""
        requirements = tmp_path / "requirements.in"
        requirements.write_text("camelot-py==1.0.9  # import: camelot\n")
        assert "`camelot` (camelot-py==1.0.9)" in libraries_line(requirements)

    def test_the_system_prompt_lists_them(self):
        """The LLM's system message names every installed import."""
        text = _system(PROMPTS).content
        for lib in installed_libraries():
            assert all(f"`{name}`" in text for name in lib.imports)
