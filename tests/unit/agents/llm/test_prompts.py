"""Prompt templates live in files and render strictly: a template and its caller cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.llm.prompts import PromptFolder, PromptTemplate, TemplateError
from controller.platform.settings import PROJECT_ROOT

PARSER = PromptFolder(PROJECT_ROOT / "agents" / "bank_parser" / "prompts")
IDRIS = PromptFolder(PROJECT_ROOT / "agents" / "idris" / "prompts")

#: The placeholders each template is documented (and rendered) with.
PARSER_FIELDS = {
    "system": {"libraries"}, "task": {"pdf_analysis", "expected_schema"},
    "generate": {"pdf_name", "task", "lessons"},
    "fix_execution": {"pdf_name", "task", "attempt", "kind", "summary", "error", "code", "earlier", "lessons"},
    "fix_mismatch": {"pdf_name", "task", "attempt", "summary", "diff", "code", "earlier", "lessons"},
    "fix_no_code": {"pdf_name", "task", "attempt", "summary", "reply", "earlier", "lessons"},
    "lessons": {"items"}, "earlier": {"items"},
}
IDRIS_FIELDS = {
    "system": set(), "analyze": {"document_type", "document_text"},
    "generate": {"analysis", "project_name", "example", "lessons"},
    "fix": {"code", "diagnostics", "attempt", "lessons"}, "lessons": {"items"}, "example": set(),
}


class TestRendering:
    def test_placeholders_are_replaced_and_code_braces_kept(self):
        """${name} is replaced; {braces}, $dollars and f-strings in code samples are left alone."""
        template = PromptTemplate("t", "Hi ${who}: f'{x}' costs $5 {y}")
        assert template.render({"who": "you"}) == "Hi you: f'{x}' costs $5 {y}\n"

    def test_missing_value_is_an_error(self):
        """A placeholder without a value raises instead of sending '${x}' to a model."""
        with pytest.raises(TemplateError, match="missing"):
            PromptTemplate("t", "${a} ${b}").render({"a": "1"})

    def test_unused_value_is_an_error(self):
        """A value the template does not use means caller and template drifted apart."""
        with pytest.raises(TemplateError, match="unused"):
            PromptTemplate("t", "${a}").render({"a": "1", "b": "2"})

    def test_unknown_template(self, tmp_path: Path):
        """Asking for a template that is not there is an error naming it."""
        with pytest.raises(TemplateError, match="nope"):
            PromptFolder(tmp_path).template("nope")


class TestTemplateFiles:
    @pytest.mark.parametrize(("folder", "fields"), [(PARSER, PARSER_FIELDS), (IDRIS, IDRIS_FIELDS)],
                             ids=["parser", "idris"])
    def test_every_template_has_the_documented_placeholders(self, folder, fields):
        """Each template file uses exactly the placeholders its caller fills."""
        assert set(folder.names()) == set(fields)
        for name, expected in fields.items():
            assert folder.template(name).fields == expected, name

    def test_idris_prompts_follow_seed_004(self):
        """The Idris prompts keep the seed's five layers and its common-errors list."""
        generate = IDRIS.template("generate").text
        assert all(f"Layer {n}" in generate for n in range(1, 6)) and "module Domains.${project_name}" in generate
        fix = IDRIS.template("fix").text
        for error in ("Can't find an implementation for Show Nat", "Ambiguous elaboration",
                      "When unifying", "No such variable"):
            assert error in fix

    def test_parser_fix_prompts_differ_by_failure(self):
        """Execution failures get the error, mismatches the diff report (seed 000)."""
        assert "${error}" in PARSER.template("fix_execution").text
        assert "${diff}" in PARSER.template("fix_mismatch").text
        assert "${diff}" not in PARSER.template("fix_execution").text
