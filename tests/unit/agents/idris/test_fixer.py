"""The fixer's targeted repairs, driven by real Idris2 transcripts (and, where no recorded
transcript exists for a case, by a diagnostic built the way the reader builds one)."""

from __future__ import annotations

from agents.idris.diagnostics import Category, Diagnostic, Span, parse_transcript
from agents.idris.fixer import add_import, imports_of, in_module, repair
from tests.unit.agents.idris.fakes import transcript

MODULE = "Domains.Sample"
BASE = "module Domains.Sample\n\nimport Data.So\n\n%default total\n\nx : Integer\nx = 1\n"


def errors(name: str) -> tuple[Diagnostic, ...]:
    return parse_transcript(transcript(name)).errors


def diagnostic(message: str, category: Category, *, file: str | None = None, span: Span | None = None,
               notes: str = "") -> Diagnostic:
    return Diagnostic("error", file, span, message, category, "", "", notes, f"Error: {message}")


def source_at(lines: dict[int, str]) -> str:
    """A module whose line N is ``lines[N]`` (blank elsewhere), to match a transcript's locations."""
    last = max(lines)
    return "\n".join(lines.get(n, "") for n in range(1, last + 1)) + "\n"


class TestMissingImport:
    def test_a_module_that_does_not_exist_is_no_longer_imported(self):
        """error009 'Module DoesntExist not found': the import line goes, nothing else changes."""
        code = BASE.replace("import Data.So\n", "import Data.So\nimport DoesntExist\n")
        fixed = repair(code, MODULE, errors("error-error009"))
        assert fixed is not None and fixed.code == BASE
        assert fixed.notes[0].startswith("removed import DoesntExist") and fixed.added_imports == ()

    def test_a_misspelt_standard_module_is_corrected(self):
        """'Module Data.Nats not found' becomes import Data.Nat."""
        code = BASE.replace("import Data.So\n", "import Data.So\nimport Data.Nats\n")
        d = diagnostic("Module Data.Nats not found", Category.MISSING_IMPORT, file="Domains.Sample",
                       span=Span(4, 1, 4, 17))
        fixed = repair(code, MODULE, [d])
        assert fixed is not None and "import Data.Nat\n" in fixed.code and "Data.Nats" not in fixed.code
        assert fixed.added_imports == ("Data.Nat",)

    def test_a_module_we_do_not_import_is_left_alone(self):
        """The transcript is about another file's import: no change."""
        assert repair(BASE, MODULE, errors("error-error009")) is None


class TestMissingImplementation:
    def test_show_of_a_vect_imports_data_vect(self):
        """error004 'Can't find an implementation for Show (Vect 4 Integer)': import Data.Vect."""
        fixed = repair(BASE, MODULE, errors("error-error004"))
        assert fixed is not None and imports_of(fixed.code) == ["Data.So", "Data.Vect"]
        assert fixed.added_imports == ("Data.Vect",) and len(fixed.notes) == 1

    def test_an_interface_of_an_unknown_type_is_not_guessed(self):
        """error005 'Can't find an implementation for Eq a / Eq Wibble': nothing to import."""
        found = [e for e in errors("error-error005") if e.category is Category.MISSING_IMPLEMENTATION]
        assert any("Eq Wibble" in e.message for e in found)
        assert repair(BASE, MODULE, found) is None


class TestUndefinedName:
    def test_a_name_from_a_known_module_gets_its_import(self):
        """'Undefined name isLTE' (no recorded transcript names one): import Data.Nat."""
        d = diagnostic("While processing right hand side of f. Undefined name isLTE.", Category.UNDEFINED_NAME)
        fixed = repair(BASE, MODULE, [d])
        assert fixed is not None and "import Data.Nat" in fixed.code

    def test_did_you_mean_renames_the_name(self):
        """error016 'No type declaration for Main.myRec2 … Did you mean: mkRec2?': renamed."""
        code = BASE + "\nmkRec2 : Integer\nmyRec2 = 3\n"
        fixed = repair(code, MODULE, errors("error-error016")[:1])
        assert fixed is not None and "mkRec2 = 3" in fixed.code and "myRec2" not in fixed.code

    def test_an_unknown_name_without_a_hint_is_left_alone(self):
        """basic070 'Undefined name y.': no import and no suggestion, no change."""
        assert repair(BASE + "\nfee : Integer\nfee = y\n", MODULE, errors("basic-basic070")) is None


class TestAmbiguousElaboration:
    def test_the_name_at_the_error_is_qualified(self):
        """basic003: `toList` at 26:21--26:27 becomes the first possible result, Main.Set.toList."""
        code = source_at({1: "module Ambig2", 25: "keepUnique : List b -> List b",
                          26: "keepUnique {b} xs = toList (fromList xs)"})
        fixed = repair(code, "Ambig2", errors("basic-basic003"))
        assert fixed is not None
        assert fixed.code.splitlines()[25] == "keepUnique {b} xs = Main.Set.toList (fromList xs)"

    def test_an_error_located_in_another_module_is_not_applied_here(self):
        """The same transcript against Domains.Sample: the location is not ours, no change."""
        assert repair(BASE, MODULE, errors("basic-basic003")) is None


class TestUnification:
    def test_a_numeric_mismatch_gets_a_cast(self):
        """'Mismatch between: Nat and Integer' at a span of ours: wrapped in cast."""
        code = BASE + "\ny : Nat\ny = x\n"
        d = diagnostic("While processing right hand side of y. When unifying:\n    Integer\nand:\n    Nat\n"
                       "Mismatch between: Integer and Nat.", Category.UNIFICATION, file=MODULE, span=Span(11, 5, 11, 6))
        fixed = repair(code, MODULE, [d])
        assert fixed is not None and fixed.code.endswith("y = (cast x)\n")

    def test_a_structural_mismatch_is_left_to_the_next_style(self):
        """error001 'Mismatch between: a and Vect ?k ?a': not numeric, no change."""
        code = source_at({1: "module Error", 6: "wrong x xs = x :: x"})
        assert repair(code, "Error", errors("error-error001")) is None


class TestHelpers:
    def test_imports_go_after_the_last_import(self):
        """add_import keeps the import block together and is idempotent."""
        once = add_import(BASE, "Data.Vect")
        assert once.splitlines()[2:4] == ["import Data.So", "import Data.Vect"]
        assert add_import(once, "Data.Vect") == once

    def test_locations_name_modules(self):
        """Idris2 prints the module, not the path; both are accepted."""
        d = diagnostic("x", Category.OTHER, file="Domains.Sample", span=Span(1, 1, 1, 2))
        assert in_module(d, MODULE)
        assert in_module(diagnostic("x", Category.OTHER, file="Domains/Sample.idr"), MODULE)
        assert not in_module(diagnostic("x", Category.OTHER, file="Error"), MODULE)

    def test_several_errors_are_repaired_in_one_pass(self):
        """Two applicable diagnostics: both repairs, two notes."""
        code = BASE.replace("import Data.So\n", "import Data.So\nimport DoesntExist\n")
        fixed = repair(code, MODULE, errors("error-error009") + errors("error-error004"))
        assert fixed is not None and len(fixed.notes) == 2
        assert imports_of(fixed.code) == ["Data.So", "Data.Vect"]
