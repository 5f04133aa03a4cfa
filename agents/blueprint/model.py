"""The blueprint (seed 003): what a workflow of manager, researcher, writer and QA must produce.

A blueprint is user input, so every field is bounded (counts, string lengths, plain names)
and unknown keys are refused. Tools and validators carry Python source: it is only ever
*text* on the host, handed to a sandbox as an input file (see :mod:`agents.blueprint.sandboxed`).

    {
      "name": "acme-research",                 # the workflow: lessons are counted per workflow
      "title": "Acme Corp: company research report",
      "goal": "Brief an investor on Acme Corp",
      "subject": "Acme Corp",
      "instructions": ["Write for an investor"],
      "tools": [{"name": "profile", "files": ["company.json"]},          # a fixture file as it is
                {"name": "growth", "files": ["revenue.csv"],              # code: run(data) in a sandbox
                 "code": "def run(data):\\n    return {...}"}],
      "sections": [{"title": "Overview", "tools": ["profile"], "guidance": "..."}],
      "qa": {"min_words": 300, "required_keywords": ["revenue"],
             "validators": [{"name": "cites", "code": "def validate(report, data): ..."}]}
    }
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from agents.blueprint import scenarios

#: A tool's, validator's or workflow's name: short, plain, usable as a file-name part.
NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: Largest Python source a tool or validator may carry.
MAX_CODE_CHARS = 20_000
MAX_TOOLS = 10
MAX_SECTIONS = 20
MAX_VALIDATORS = 5
MAX_FILES_PER_CALL = 8


def _plain_file(value: str) -> str:
    if not _FILE.match(value) or value in (".", ".."):
        raise ValueError(f"{value[:40]!r} is not a plain file name in the target's folder")
    return value


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must be one line")
    return value.strip()


def _unquoted(value: str) -> str:
    # A section title or keyword is quoted in the fixes the lessons store keeps (directives.py).
    if "'" in value:
        raise ValueError("must not contain a quote (')")
    return _one_line(value)


FileName = Annotated[str, AfterValidator(_plain_file)]
Title = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_one_line)]
Heading = Annotated[str, Field(min_length=1, max_length=80), AfterValidator(_unquoted)]
Keyword = Annotated[str, Field(min_length=1, max_length=60), AfterValidator(_unquoted)]
Sentence = Annotated[str, Field(max_length=300)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolSpec(_Strict):
    """A research tool: a fixture file as it is, or ``run(data)`` over fixture files (in a sandbox)."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field("", max_length=300)
    required: bool = Field(False, description="The report cannot be written without this tool's finding: "
                                              "an empty input or a failure is the manager's no-go.")
    files: list[FileName] = Field(default_factory=list, max_length=MAX_FILES_PER_CALL)
    code: str | None = Field(None, min_length=1, max_length=MAX_CODE_CHARS,
                             description="Python source defining run(data) -> JSON value.")
    code_file: FileName | None = Field(None, description="The source in a file of the target instead (a .py "
                                                         "uploaded with the blueprint); read when the target loads.")

    @model_validator(mode="after")
    def _file_or_code(self) -> ToolSpec:
        if self.code is not None and self.code_file is not None:
            raise ValueError(f"tool {self.name!r} gives both code and code_file")
        if self.code is None and self.code_file is None and len(self.files) != 1:
            raise ValueError(f"tool {self.name!r} without code must name exactly one file (its finding)")
        return self


class ValidatorSpec(_Strict):
    """A custom validator: ``validate(report, data)`` judged in a sandbox."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field("", max_length=300)
    files: list[FileName] = Field(default_factory=list, max_length=MAX_FILES_PER_CALL)
    code: str | None = Field(None, min_length=1, max_length=MAX_CODE_CHARS,
                             description="Python source defining validate(report, data) -> {passed, message, fix}.")
    code_file: FileName | None = Field(None, description="The source in a file of the target instead.")

    @model_validator(mode="after")
    def _code_or_file(self) -> ValidatorSpec:
        if (self.code is None) == (self.code_file is None):
            raise ValueError(f"validator {self.name!r} needs exactly one of code and code_file")
        return self


class SectionSpec(_Strict):
    """One section of the report: its title, the tools whose findings it shows, guidance."""

    title: Heading
    tools: list[str] = Field(default_factory=list, max_length=MAX_TOOLS)
    guidance: str = Field("", max_length=500)


class QASpec(_Strict):
    """The QA role's rules: built-in checks (in-process) and custom validators (sandboxed)."""

    min_words: int = Field(150, ge=0, le=20_000)
    required_sections: list[Heading] | None = Field(None, max_length=MAX_SECTIONS,
                                                  description="Default: every section's title.")
    required_keywords: list[Keyword] = Field(default_factory=list, max_length=30)
    markdown: bool = Field(True, description="Check the markdown structure.")
    validators: list[ValidatorSpec] = Field(default_factory=list, max_length=MAX_VALIDATORS)


class Condition(_Strict):
    """One test over a finding: a dict's fact (``field``, dotted for nested), or over a list of rows
    (``aggregate`` count, sum, min, max or mean of the column ``field``, of the rows ``where`` names)."""

    tool: str = Field(pattern=NAME_PATTERN)
    field: str = Field("", max_length=80)
    aggregate: Literal["value", "count", "sum", "min", "max", "mean"] = "value"
    where: dict[Annotated[str, Field(max_length=80)], Annotated[str, Field(max_length=120)]] = Field(
        default_factory=dict, max_length=3, description="Rows whose columns equal these values (case-insensitive).")
    op: Literal["<", "<=", ">", ">=", "==", "!="]
    value: float | Annotated[str, Field(max_length=120)]


class Rule(_Strict):
    """When every condition holds, the decision is ``choose``."""

    when: list[Condition] = Field(min_length=1, max_length=5)
    choose: Heading
    because: Sentence = ""


class DecisionSpec(_Strict):
    """A decision the report must state: the options, and rules over the findings that choose one
    (the first rule whose conditions all hold; else ``default``)."""

    question: Title
    options: list[Heading] = Field(min_length=2, max_length=6)
    rules: list[Rule] = Field(min_length=1, max_length=10)
    default: Heading
    section: Heading = Field("Recommendation", description="The section that states the decision.")

    @model_validator(mode="after")
    def _known_options(self) -> DecisionSpec:
        options = {option.lower() for option in self.options}
        unknown = [c for c in [self.default, *(r.choose for r in self.rules)] if c.lower() not in options]
        if unknown:
            raise ValueError(f"decision: {', '.join(unknown)} is not one of its options")
        return self


class Blueprint(_Strict):
    """A validated blueprint (see the module doc)."""

    name: str = Field(pattern=NAME_PATTERN, description="The workflow's name.")
    scenario: str = Field("custom", pattern=NAME_PATTERN,
                          description="custom, or a scenario whose template gives default sections and "
                                      "instructions when the blueprint has none (agents/blueprint/scenarios/).")
    title: Title
    goal: str = Field("", max_length=1000)
    subject: str = Field(min_length=1, max_length=120)
    instructions: list[Sentence] = Field(default_factory=list, max_length=20)
    tools: list[ToolSpec] = Field(default_factory=list, max_length=MAX_TOOLS)
    sections: list[SectionSpec] = Field(min_length=1, max_length=MAX_SECTIONS)
    qa: QASpec = Field(default_factory=QASpec)
    decision: DecisionSpec | None = Field(None, description="A recommendation the report must make: options and "
                                                            "rules over the findings that choose between them.")

    @model_validator(mode="before")
    @classmethod
    def _scenario_defaults(cls, data: Any) -> Any:
        return scenarios.with_defaults(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _references(self) -> Blueprint:
        tools = [tool.name for tool in self.tools]
        if len(set(tools)) != len(tools):
            raise ValueError("tool names must be unique")
        titles = [section.title.lower() for section in self.sections]
        if len(set(titles)) != len(titles):
            raise ValueError("section titles must be unique")
        for section in self.sections:
            unknown = [name for name in section.tools if name not in tools]
            if unknown:
                raise ValueError(f"section {section.title!r} uses unknown tool(s): {', '.join(unknown)}")
        unknown = sorted({c.tool for r in self.decision.rules for c in r.when} - set(tools)) if self.decision else []
        if unknown:
            raise ValueError(f"the decision's rules use unknown tool(s): {', '.join(unknown)}")
        return self

    def decision_numbers(self) -> list[float]:
        """The thresholds of the decision's rules (a report may state them: they are the blueprint's)."""
        rules = self.decision.rules if self.decision else []
        return [c.value for r in rules for c in r.when if isinstance(c.value, float)]

    def required_sections(self) -> list[str]:
        """The sections QA requires: the blueprint's list, else every section's title."""
        if self.qa.required_sections is not None:
            return list(self.qa.required_sections)
        return [section.title for section in self.sections]

    def code_files(self) -> list[str]:
        """Every source file a tool or validator names (``code_file``), once each."""
        names = [tool.code_file for tool in self.tools if tool.code_file is not None]
        names += [v.code_file for v in self.qa.validators if v.code_file is not None]
        return list(dict.fromkeys(names))

    def data_files(self) -> list[str]:
        """Every fixture file a tool or validator names, once each."""
        names = [name for tool in self.tools for name in tool.files]
        names += [name for validator in self.qa.validators for name in validator.files]
        return list(dict.fromkeys(names))
