"""The LLM coder's prompts (seeds 000/001), rendered from the templates in ``../prompts/``.

- ``generate``: the analysis (page text, ruled tables, positioned header words), the
  expected schema (columns, dtypes, the CSV's first lines), the exact function interface
  and the data-cleaning rules, plus lessons from earlier runs;
- ``fix-execution``: the same, plus the previous code and its error (traceback);
- ``fix-mismatch``: the same, plus the previous code and the comparison's diff report;
- ``fix-no-code``: the same, plus the unusable answer and why it was unusable.

Every part is capped, so a huge statement or traceback cannot blow the context window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.bank_parser.analysis import Analysis, ExpectedSchema
from agents.bank_parser.coders.base import FailureKind, Feedback
from agents.bank_parser.installed import libraries_line
from agents.bank_parser.pages import PageAnalysis, Word
from agents.lessons import Lesson, render_lessons
from agents.llm.client import ChatMessage
from agents.llm.prompts import PromptFolder

PROMPTS = PromptFolder(Path(__file__).resolve().parent.parent / "prompts")
PAGE_TEXT_CHARS = 2500
TABLE_ROWS = 8
WORD_LINES = 12
ERROR_CHARS = 3000
DIFF_CHARS = 3000
CODE_CHARS = 20000
REPLY_CHARS = 2000
LINE_TOLERANCE = 3.0
#: Which template answers which failure of the previous attempt.
FIX_TEMPLATES = {
    FailureKind.MISMATCH: "fix_mismatch",
    FailureKind.NO_CODE: "fix_no_code",
}


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: which step it is, and the messages to send."""

    step: str
    messages: tuple[ChatMessage, ...]

    def transcript(self) -> str:
        """The prompt as Markdown, for the attempt's ``prompt.md``."""
        return "".join(f"<!-- {m.role} -->\n\n{m.content}\n" for m in self.messages)


def generate_prompt(analysis: Analysis, lessons: Sequence[Lesson], folder: PromptFolder = PROMPTS) -> Prompt:
    """The first attempt's prompt."""
    user = folder.template("generate").render({
        "pdf_name": analysis.pdf_name, "task": task(analysis, folder), "lessons": lessons_section(lessons, folder),
    })
    return Prompt("generate", (_system(folder), ChatMessage("user", user)))


def refine_prompt(
    analysis: Analysis, history: Sequence[Feedback], lessons: Sequence[Lesson], folder: PromptFolder = PROMPTS,
) -> Prompt:
    """The prompt after a failure: chosen by the latest failure that says something about the code.

    A failed model call (``llm_error``) says nothing about the code, so the failure
    before it decides; with none, the first prompt is sent again.
    """
    useful = [f for f in history if f.kind != FailureKind.LLM_ERROR]
    if not useful:
        return generate_prompt(analysis, lessons, folder)
    latest, earlier = useful[-1], useful[:-1]
    name = FIX_TEMPLATES.get(latest.kind, "fix_execution")
    values = {
        "pdf_name": analysis.pdf_name, "task": task(analysis, folder), "attempt": str(latest.attempt),
        "summary": latest.summary, "lessons": lessons_section(lessons, folder),
        "earlier": earlier_section(earlier, folder),
    }
    if name == "fix_no_code":
        values["reply"] = _tail(latest.detail or latest.code or "(empty)", REPLY_CHARS)
    else:
        values["code"] = _head(latest.code, CODE_CHARS).rstrip()
    if name == "fix_execution":
        values |= {"kind": latest.kind.value, "error": _tail(latest.detail or latest.summary, ERROR_CHARS)}
    if name == "fix_mismatch":
        values["diff"] = _head(latest.detail, DIFF_CHARS)
    step = name.replace("_", "-")
    return Prompt(step, (_system(folder), ChatMessage("user", folder.template(name).render(values))))



def task(analysis: Analysis, folder: PromptFolder = PROMPTS) -> str:
    """The shared part of every prompt: statement, expected output, interface, rules."""
    return folder.template("task").render({
        "pdf_analysis": describe_pdf(analysis),
        "expected_schema": describe_expected(analysis.expected, getattr(analysis, "schema", None)),
    })


def lessons_section(lessons: Sequence[Lesson], folder: PromptFolder = PROMPTS) -> str:
    """The 'lessons from earlier runs' section, or '' when there are none."""
    if not lessons:
        return ""
    return "\n" + folder.template("lessons").render({"items": render_lessons(lessons)})


def earlier_section(earlier: Sequence[Feedback], folder: PromptFolder = PROMPTS) -> str:
    """One line per earlier failed attempt of this run, or ''."""
    if not earlier:
        return ""
    items = "\n".join(f"- attempt {f.attempt} ({f.strategy or 'unknown'}): {f.kind.value}: {f.summary}"
                      for f in earlier)
    return "\n" + folder.template("earlier").render({"items": items})


def describe_pdf(analysis: Analysis) -> str:
    """The statement as the analysis saw it: per page its text, ruled tables and word positions."""
    parts = [f"`{analysis.pdf_name}`: {analysis.page_count} page(s); the first {len(analysis.pages)} "
             f"are shown (pages are {analysis.pages[0].width:.0f} x {analysis.pages[0].height:.0f} points)."
             if analysis.pages else f"`{analysis.pdf_name}`: no page could be analysed."]
    for page in analysis.pages:
        parts.append(_describe_page(page, with_words=page is analysis.pages[0]))
    return "\n\n".join(parts)


def _describe_page(page: PageAnalysis, with_words: bool) -> str:
    lines = [f"### Page {page.number}", "", "Text (pdfplumber `extract_text`):", "",
             "```text", _head(page.text, PAGE_TEXT_CHARS) or "(no text layer)", "```"]
    if page.tables:
        lines += ["", f"Ruled tables found by `extract_tables`: {len(page.tables)}; first rows of the first:",
                  "", "```text", *_table_rows(page.tables[0]), "```"]
    else:
        lines += ["", "`extract_tables` finds no ruled table on this page."]
    if with_words and page.words:
        lines += ["", "First lines of words with their x positions (`extract_words`; x0-x1 in points):",
                  "", "```text", *_word_lines(page.words), "```"]
    return "\n".join(lines)


def _table_rows(table: list[list[str | None]]) -> list[str]:
    rows = [" | ".join("" if cell is None else " ".join(str(cell).split()) for cell in row)
            for row in table[:TABLE_ROWS]]
    more = len(table) - TABLE_ROWS
    return rows + ([f"... {more} more row(s)"] if more > 0 else [])


def _word_lines(words: list[Word]) -> list[str]:
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.top, w.x0)):
        if lines and abs(lines[-1][0].top - word.top) <= LINE_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [f"top={line[0].top:.0f}: " + " ".join(f"{w.text}@{w.x0:.0f}-{w.x1:.0f}" for w in line)
            for line in lines[:WORD_LINES]]


def describe_expected(expected: ExpectedSchema | None, schema: object = None) -> str:
    """The DataFrame parse() must return: columns, dtypes, row count, the CSV's first lines."""
    if expected is None and schema is not None:  # issue 15: the output setting, self-consistency
        return describe_schema(schema)
    if expected is None:
        return ("No expected output is known for this statement. Return one row per transaction with "
                "the columns of the statement's table, named as in its header.")
    columns = "\n".join(f"- `{name}`: {expected.dtypes[name]}" for name in expected.columns)
    head = "\n".join(expected.head_lines)
    return (f"{expected.row_count} rows. The columns, in this order, with the dtypes `pd.read_csv` "
            f"gives them (`str` and `object` are text):\n\n{columns}\n\n"
            f"The first lines of the expected CSV (cells that are empty here are NaN):\n\n```csv\n{head}\n```")


def _system(folder: PromptFolder) -> ChatMessage:
    return ChatMessage("system", folder.template("system").render({"libraries": libraries_line()}))


def _head(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"({len(text) - limit} characters before) ...\n" + text[-limit:]


def describe_schema(schema: object) -> str:
    """Without a result.csv: the columns the output setting names, and how the run is judged."""
    names = ", ".join(f"`{name}` ({role})" for name, role in schema.columns())  # type: ignore[attr-defined]
    return (f"No result.csv exists. Return one row per transaction (no opening, closing or "
            f"carried-forward balance rows) with these columns in this order: {names}. Dates as "
            f"text in the strftime format `{schema.date_format}`; amounts and balances as floats; "  # type: ignore[attr-defined]
            "debit and credit positive with the other left empty, a single amount column signed "
            "(credits positive). The run passes only if the frame is self-consistent: each balance "
            "equals the previous balance plus the row's amount to the cent, the printed opening/"
            "closing balances and totals agree, and every transaction line of the PDF is a row.")
