"""The diagnostics reader on the real Idris2 0.8.0 transcripts in tests/fixtures/idris2-diagnostics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.idris.diagnostics import Category, Span, classify, parse_transcript, summarize
from tests.unit.agents.idris.fakes import TRANSCRIPTS, transcript

ALL = sorted(p.parent.name for p in TRANSCRIPTS.glob("*/expected"))
#: An error header, counted independently of the reader: "Error: " with a space (a location
#: such as "Error:6:19--6:20" belongs to a file named Error.idr), maybe after a REPL prompt.
HEADER = re.compile(r"^(?:[A-Za-z_][\w.']*> )?Error: ", re.M)
EXCERPT_LINE = re.compile(r"^\s*0*(\d+) \|", re.M)


class TestEveryTranscript:
    def test_the_fixtures_are_all_there(self):
        """The copy of the recorded transcripts is complete (117 cases)."""
        assert len(ALL) == 117

    @pytest.mark.parametrize("name", ALL)
    def test_every_error_block_is_found(self, name):
        """As many error diagnostics as there are `Error:` headers in the transcript."""
        text = transcript(name)
        assert len(parse_transcript(text).errors) == len(HEADER.findall(text))

    @pytest.mark.parametrize("name", ALL)
    def test_locations_agree_with_the_source_excerpt(self, name):
        """Each location's line is one of the numbered lines of the excerpt printed under it."""
        for diagnostic in parse_transcript(transcript(name)).diagnostics:
            numbers = {int(n) for n in EXCERPT_LINE.findall(diagnostic.excerpt)}
            if diagnostic.span is not None and numbers:
                assert {diagnostic.span.start_line, diagnostic.span.end_line} & numbers, diagnostic.text

    @pytest.mark.parametrize("name", ALL)
    def test_messages_hold_neither_locations_nor_excerpts(self, name):
        """A message stops before its location; the excerpt and notes are kept apart."""
        for diagnostic in parse_transcript(transcript(name)).diagnostics:
            assert not EXCERPT_LINE.search(diagnostic.message)
            assert not re.search(r"^\S+:\d+:\d+--\d+:\d+$", diagnostic.message, re.M)
            assert diagnostic.message
            assert diagnostic.text.splitlines()[0].rstrip().endswith(diagnostic.message.splitlines()[0].rstrip())


class TestSingleErrors:
    def test_unification_error_location_and_message(self):
        """error001: file 'Error' (a location, not a header), 6:19--6:20, the unification message."""
        (error,) = parse_transcript(transcript("error-error001")).errors
        assert error.file == "Error" and error.span == Span(6, 19, 6, 20)
        assert error.message == ("While processing right hand side of wrong. When unifying:\n    a\nand:\n"
                                 "    Vect ?k ?a\nMismatch between: a and Vect ?k ?a.")
        assert error.category is Category.UNIFICATION and error.context == "right hand side of wrong"
        assert error.excerpt.splitlines()[-1].strip() == "^"

    def test_ambiguous_elaboration_keeps_the_candidates(self):
        """basic003: the possible results are part of the message, the span is the name."""
        (error,) = parse_transcript(transcript("basic-basic003")).errors
        assert error.file == "Ambig2" and error.span == Span(26, 21, 26, 27)
        assert error.category is Category.AMBIGUOUS
        assert "Main.Set.toList (Main.Set.fromList xs)" in error.message
        assert "Main.Vect.toList (Main.Vect.fromList xs)" in error.message

    def test_missing_module(self):
        """error009: no progress line, the import's location, category missing_import."""
        parsed = parse_transcript(transcript("error-error009"))
        (error,) = parsed.errors
        assert (error.file, error.span, error.message) == ("Exists", Span(1, 1, 1, 19), "Module DoesntExist not found")
        assert error.category is Category.MISSING_IMPORT and parsed.built == ()

    def test_an_error_without_location(self):
        """error032: a command-line error has no location; the whole text is the message."""
        (error,) = parse_transcript(transcript("error-error032")).errors
        assert error.file is None and error.span is None
        assert error.message.endswith('Did you mean to type "--repl"?')

    def test_a_span_over_several_lines(self):
        """total007: 5:1--6:19, and the missing cases go to the notes."""
        first, second = parse_transcript(transcript("total-total007")).errors
        assert first.span == Span(5, 1, 6, 19) and first.notes == "Missing cases:\n    foo Nothing"
        assert first.category is Category.COVERAGE and second.category is Category.TOTALITY


class TestSeveralErrors:
    def test_errors_and_warnings_across_modules(self):
        """coverage015: four errors in two modules, three warnings between them, in order."""
        parsed = parse_transcript(transcript("coverage-coverage015"))
        assert [d.severity for d in parsed.diagnostics] == ["error"] * 3 + ["warning"] * 3 + ["error"]
        assert [(d.file, d.span.start_line) for d in parsed.errors] == [
            ("Issue1169", 3), ("Issue1169", 6), ("Issue1169", 9), ("Issue1366", 33)]
        assert [m for m, _ in parsed.built] == ["Issue1169", "Issue1366"]

    def test_nested_alternatives_stay_in_one_block(self):
        """error003: one error with four alternatives; the first location is the error's."""
        (error,) = parse_transcript(transcript("error-error003")).errors
        assert error.span == Span(12, 18, 12, 19) and error.file == "Error"
        assert error.message.endswith("Mismatch between: Nat and Vect ?n ?a.")
        assert error.notes.count("If Prelude.") == 3

    def test_repl_prompted_errors_and_suggestions(self):
        """error016: a build error and two REPL errors, each with its 'Did you mean'."""
        errors = parse_transcript(transcript("error-error016")).errors
        assert [e.file for e in errors] == ["Issue1230", "(Interactive)", "(Interactive)"]
        assert [e.notes for e in errors] == ["Did you mean: mkRec2?", "Did you mean: map?", "Did you mean: length?"]
        assert all(e.category is Category.UNDEFINED_NAME for e in errors)

    def test_four_files_in_one_run(self):
        """perror011: four parse errors in four files, none lost."""
        errors = parse_transcript(transcript("error-perror011")).errors
        assert [e.file for e in errors] == ["Issue1345", "Issue1496-1", "Issue1496-2", "Pretty"]
        assert all(e.category is Category.PARSE for e in errors)


class TestClassification:
    @pytest.mark.parametrize(("message", "category"), [
        ("While processing right hand side of foo. Can't find an implementation for Show Nat.",
         Category.MISSING_IMPLEMENTATION),
        ("Undefined name lentgh.", Category.UNDEFINED_NAME),
        ("No such variable So", Category.UNDEFINED_NAME),
        ("Main.Bar is already defined.", Category.DUPLICATE),
        ("Expected at most one input file but was given: repl, pkg.ipkg", Category.OTHER),
        ("Expected 'then'.", Category.PARSE),
    ])
    def test_messages_map_to_categories(self, message, category):
        """The seed's common errors (and a few more) get their category."""
        assert classify(message) is category

    def test_colour_codes_are_ignored(self):
        """A transcript with ANSI colours parses like the plain one."""
        plain = transcript("error-error001")
        coloured = plain.replace("Error: ", "\x1b[1;31mError:\x1b[0m ", 1)
        assert parse_transcript(coloured).errors[0].span == parse_transcript(plain).errors[0].span

    def test_summary_lists_errors_then_how_many_more(self):
        """Five one-line errors at most, then a count of the rest."""
        text = summarize(parse_transcript(transcript("data-data006")).errors, limit=2)
        assert text.splitlines()[0].startswith("ConvertPiInfo:6:1--6:35: error[unification]: Mismatch between")
        assert re.fullmatch(r"\.\.\. and \d+ more error\(s\)", text.splitlines()[-1])


def test_the_fixture_readme_states_the_source():
    """The copied fixtures keep their provenance (BSD-3-Clause, Idris2's test suite)."""
    readme = Path(TRANSCRIPTS / "README.md").read_text()
    assert "BSD-3-Clause" in readme and "0.8.0" in readme


class TestHostileTranscripts:
    """The transcript is untrusted text: bounded, linear-time, and never an exception."""

    def test_a_megabyte_line_of_spaces_after_a_location_is_read_in_linear_time(self):
        """Regression: the excerpt pattern backtracked quadratically on a long blank line (hours for 1 MiB)."""
        from agents.idris.diagnostics import MAX_LINE_CHARS

        parsed = parse_transcript("Error: x\nDomains.X:1:1--1:2\n" + " " * (1024 * 1024) + "x\n")
        assert len(parsed.errors) == 1
        assert all(len(line) <= MAX_LINE_CHARS for line in parsed.errors[0].text.splitlines())

    def test_diagnostics_are_capped_and_the_rest_counted(self):
        """200,000 one-line error blocks keep MAX_DIAGNOSTICS and count the others as dropped."""
        from agents.idris.diagnostics import MAX_DIAGNOSTICS

        parsed = parse_transcript("Error: x\n" * 200_000)
        assert len(parsed.diagnostics) == MAX_DIAGNOSTICS
        assert parsed.dropped == 200_000 - MAX_DIAGNOSTICS


class TestFuzzedTranscripts:
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.decoders import IDRIS_INPUTS

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(IDRIS_INPUTS)
    def test_any_text_keeps_the_contract(self, text):
        """Any transcript parses, serialises, and run_check classifies it in one line (SandboxError only)."""
        from tests.fuzz.decoders import check_idris

        check_idris(text)
