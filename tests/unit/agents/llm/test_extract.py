"""Code extraction from model replies: fenced or bare, with prose around it, checked by
``ast.parse`` only; a reply without usable code is a result with a reason, not an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.llm.extract import PYTHON_TAGS, extract_fenced, extract_python, fenced_blocks

GOOD = "import pandas as pd\n\n\ndef parse(pdf_path):\n    return pd.DataFrame()\n"


class TestFencedReplies:
    def test_fenced_block_with_prose_around_it(self):
        """The code inside a ```python fence is taken; the prose before and after is dropped."""
        reply = f"Sure! Here is the parser:\n\n```python\n{GOOD}```\n\nIt reads every page."
        found = extract_python(reply)
        assert found.code == GOOD and found.how == "fenced"

    def test_last_block_that_defines_parse_wins(self):
        """A draft and a corrected version: the later block is the answer."""
        draft = GOOD.replace("pd.DataFrame()", "None")
        reply = f"```python\n{draft}```\nOops, fixed:\n```py\n{GOOD}```\nUsage:\n```python\nparse('x.pdf')\n```"
        assert extract_python(reply).code == GOOD

    def test_other_languages_are_ignored(self):
        """Blocks tagged bash, json or csv are not mistaken for the parser."""
        reply = f"```bash\npip install pdfplumber\n```\n```json\n{{}}\n```\n```\n{GOOD}```"
        assert extract_python(reply).code == GOOD

    def test_tilde_and_long_fences(self):
        """~~~ fences and four-backtick fences that contain ``` inside both work."""
        inner = GOOD + 'DOC = """\n```\nnot a fence end\n```\n"""\n'
        assert extract_python(f"~~~python\n{GOOD}~~~").code == GOOD
        assert extract_python(f"````python\n{inner}````\ndone").code == inner

    def test_crlf_line_endings(self):
        """Windows line endings from a proxy do not break extraction."""
        reply = f"```python\r\n{GOOD}```\r\n".replace("\n", "\r\n").replace("\r\r", "\r")
        assert extract_python(reply).code == GOOD

    def test_unclosed_fence_that_still_parses(self):
        """A reply cut off after the code, before the closing fence, still yields the code."""
        found = extract_python(f"```python\n{GOOD}")
        assert found.code == GOOD and found.how == "unclosed_fence"

    def test_reply_cut_off_inside_the_code(self):
        """A truncated module is unusable, and the reason says it was cut off."""
        found = extract_python(f"```python\n{GOOD}\ndef helper(x:\n    return [")
        assert found.code is None
        assert "SyntaxError" in found.problem and "cut off" in found.problem
        assert "def helper" in found.candidate


class TestUnfencedReplies:
    def test_bare_code(self):
        """A reply that is only code is taken whole."""
        found = extract_python(GOOD)
        assert found.code == GOOD and found.how == "bare"

    def test_prose_before_and_after_bare_code(self):
        """Sentences around unfenced code are trimmed until what is left parses."""
        reply = f"Here is the module you asked for.\n{GOOD}\nThis handles wrapped lines too."
        found = extract_python(reply)
        assert found.code == GOOD and found.how == "trimmed"

    def test_no_code_at_all(self):
        """An apology is no code: code is None with a reason."""
        found = extract_python("I'm sorry, I cannot help with parsing bank statements.")
        assert found.code is None and found.problem == "the reply holds no Python code"

    def test_empty_reply(self):
        """An empty reply is reported as such."""
        assert extract_python("  \n").problem == "the reply was empty"


class TestChecks:
    def test_syntax_error_is_reported_with_its_line(self):
        """Code that does not parse is unusable; the problem names the line; the text is kept."""
        broken = "def parse(pdf_path):\n    return pd.DataFrame(\n"
        found = extract_python(f"```python\n{broken}```")
        assert found.code is None
        assert found.problem.startswith("the code does not parse: SyntaxError at line")
        assert found.candidate == broken

    def test_code_without_parse_is_unusable(self):
        """A module that defines no top-level parse() cannot be called by the sandbox."""
        found = extract_python("```python\ndef read(pdf_path):\n    return 1\n```")
        assert found.code is None and "no top-level parse()" in found.problem

    def test_parse_bound_by_import_or_assignment_counts(self):
        """parse may be bound by assignment, like any callable name."""
        assert extract_python("```python\ndef _p(x):\n    return x\nparse = _p\n```").ok

    def test_extraction_never_runs_the_code(self, tmp_path: Path):
        """Extraction parses only: code with side effects at import leaves no trace."""
        marker = tmp_path / "ran"
        hostile = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n\ndef parse(p):\n    return 1\n"
        assert extract_python(f"```python\n{hostile}```").ok
        assert not marker.exists()


class TestOtherLanguages:
    def test_idris_block(self):
        """Idris modules come out of ```idris blocks when they contain a module line."""
        module = "module Domains.X\n\nx : Nat\nx = 1\n"
        found = extract_fenced(f"Here:\n```idris\n{module}```", frozenset({"idris", "idris2"}), "module ")
        assert found.code == module

    def test_idris_without_module_line(self):
        """A block without a module line is unusable."""
        found = extract_fenced("```idris\nx : Nat\n```", frozenset({"idris"}), "module ")
        assert found.code is None and "'module'" in found.problem

    @pytest.mark.parametrize("tag", sorted(PYTHON_TAGS))
    def test_python_tags(self, tag):
        """Every accepted Python info string is recognised."""
        assert fenced_blocks(f"```{tag}\nx = 1\n```")[0].tag == tag


class TestHostileReplies:
    @pytest.mark.parametrize("reply", [
        "def parse(p):\n    return " + "-" * 200_000 + "1\n",
        "def parse(p):\n    return " + "not " * 100_000 + "1\n",
        "```python\nx = " + "lambda: " * 50_000 + "1\n```",
    ])
    def test_nesting_that_exhausts_the_parser_is_a_problem_not_an_exception(self, reply):
        """Regression (make fuzz): CPython's parser raised MemoryError on deep nesting; now a one-line problem."""
        found = extract_python(reply)
        assert not found.ok and "nested too deeply" in found.problem

    def test_an_oversized_reply_is_refused_without_parsing(self):
        """A reply past MAX_REPLY_CHARS is refused at once (trimming would parse it hundreds of times)."""
        from agents.llm.extract import MAX_REPLY_CHARS

        found = extract_python("x = 1\n" * (MAX_REPLY_CHARS // 6 + 1))
        assert not found.ok and "at most" in found.problem
        assert not extract_fenced("a" * (MAX_REPLY_CHARS + 1), frozenset({"idris"}), "module ").ok


class TestFuzzedReplies:
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.decoders import REPLY_INPUTS

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(REPLY_INPUTS)
    def test_any_reply_keeps_the_contract(self, reply):
        """Any reply gives an Extraction; code called usable parses."""
        from tests.fuzz.decoders import check_reply

        check_reply(reply)
