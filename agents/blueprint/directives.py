"""Directives: what the writer is told to do, from the blueprint, from QA and from lessons.

A directive is plain data (it lives in the graph's state and in the lessons store). The
offline writer acts on its ``kind``; an LLM writer would read its ``text``. The text is
also the *recommended fix* the execution history keeps, in one fixed form
(``kind: sentence with the 'value' quoted``), so the manager of a later run turns a lesson
back into the same directive with :func:`from_lesson`.

    detail    write every section in full (all facts, longer tables): the report was too short
    section   include a section titled 'value'
    keyword   mention 'value'
    fill      never leave a section without text
    cite      state what the findings hold on 'value' (QA: the report said they hold nothing on it)
    ground    use only the findings' figures, a derived one beside its operands (QA: 'value' was neither)
    decide    recommend 'value', the option the blueprint's decision rules choose from the findings
    note      free text (the blueprint's instructions; only an LLM writer reads it)
"""

from __future__ import annotations

import re
from typing import Literal, TypedDict, get_args

from agents.untrusted_text import one_line

Kind = Literal["detail", "section", "keyword", "fill", "cite", "ground", "decide", "note"]
KINDS: tuple[str, ...] = get_args(Kind)
#: The kinds whose value is quoted in their text (and read back from a lesson).
VALUED = ("section", "keyword", "cite", "ground", "decide")
MAX_VALUE = 80
_QUOTED = re.compile(r"'([^'\n]{1,80})'")
_SENTENCES = {
    "detail": "write every section in full, with every fact and table row the research found",
    "section": "include a section titled '{value}'",
    "keyword": "mention '{value}' in the report",
    "fill": "never leave a section without text",
    "cite": "state what the findings hold on '{value}' (a finding names it: never write that they say nothing "
            "about it)",
    "ground": "use only figures the findings hold, and show a derived figure beside the figures it comes from "
              "(not '{value}')",
    "decide": "recommend '{value}', the option the blueprint's decision rules choose from the findings, with "
              "the findings that decide it",
}


class Directive(TypedDict):
    """One instruction to the writer (see the module doc)."""

    kind: str
    value: str
    text: str
    source: str


class Issue(TypedDict):
    """One failed QA rule: its reason, what is wrong, and the directive that fixes it."""

    code: str
    message: str
    fix: Directive


def make(kind: str, value: str = "", source: str = "qa", why: str = "") -> Directive:
    """A directive with its canonical text (``why`` is appended in brackets, for a person)."""
    value = one_line(value, 300 if kind == "note" else MAX_VALUE).replace("'", "")
    sentence = _SENTENCES.get(kind, "{value}").format(value=value)
    text = f"{kind}: {sentence}" + (f" ({one_line(why, 160)})" if why else "")
    return Directive(kind=kind, value=value if kind in VALUED else "", text=text, source=source)


def note(text: str) -> Directive:
    """A free-text instruction (the blueprint's own)."""
    return Directive(kind="note", value="", text=one_line(text, 300), source="blueprint")


def from_lesson(text: str) -> Directive | None:
    """The directive a lesson's text was written from, or None when it is not one of ours."""
    kind, _, rest = text.partition(": ")
    if kind not in KINDS:
        return None
    value = ""
    if kind in VALUED:
        quoted = _QUOTED.search(rest)
        if quoted is None:
            return None
        value = quoted[1]
    return Directive(kind=kind, value=value, text=one_line(text, 300), source="lesson")


def merged(directives: list[Directive]) -> list[Directive]:
    """The directives without repeats (same kind and value), first occurrence kept."""
    seen: dict[tuple[str, str], Directive] = {}
    for directive in directives:
        key = (directive["kind"], directive["value"].lower() if directive["kind"] != "note" else directive["text"])
        seen.setdefault(key, directive)
    return list(seen.values())
