"""Node schemas as data: one JSON Schema (or its TOML form) per node, validated with pydantic.

The subset of JSON Schema an intake node uses: an ``object`` with flat ``properties`` of
type ``integer``, ``number``, ``string`` or ``boolean``, with ``minimum``/``maximum`` (and the
exclusive forms), ``enum``, ``pattern``, ``minLength``/``maxLength``, ``format`` (``date``: a
full date; ``partial-date``: a year, a month or a day as the user gave it; ``year``: an
integer year; ``money``: an amount) and ``required``. Every value is checked against its
property with the ``jsonschema`` library before it is stored (:mod:`agents.intake.values`).

Extension keys (JSON Schema allows ``x-`` keys) carry what the deterministic roles need:
``x-question`` (how the info role asks), ``x-keywords`` (words that tie a nearby value to the
field), ``x-cues`` (words the value follows at once: "I'm 41", "my name is"), ``x-text``
(free text: ``person``, ``place`` or ``phrase``), ``x-synonyms`` (other words for an enum
value), ``x-on-event`` (the value a life event sets), ``x-temporal`` (the time the field is
about, when its question does not say), ``x-freshness-days`` (after how long a held value is
confirmed again), ``x-per`` (the period an amount is per: "4k a month" for a yearly field is
48000); on the node, ``x-priority`` (0-100: how early the decision role takes it),
``x-goal-keywords`` (words of a goal the node serves), ``x-always`` (every conversation needs
it), ``x-priority-on`` (events that make it urgent) and ``x-freshness-days`` (for its fields).
Every size is bounded; a schema that does not validate is one line and exit 2.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.bounded_json import JSONBounds, loads_bounded
from agents.intake.patterns import EVENT_NAMES
from agents.ports.errors import ConfigError

#: Largest schema file read.
MAX_SCHEMA_BYTES = 32 * 1024
NODES_DIR = "nodes"
HINT = "see docs/intake.md"
Scalar = int | float | str | bool
Kind = Literal["boolean", "money", "number", "year", "date", "choice", "text"]
_Words = list[str]


def _lower_words(value: list[str], what: str) -> list[str]:
    for word in value:
        if not 1 <= len(word) <= 40 or word != word.strip():
            raise ValueError(f"{what} {word[:50]!r} must be 1 to 40 characters without surrounding blanks")
    return [word.lower() for word in value]


class FieldSchema(BaseModel):
    """One property of a node."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["integer", "number", "string", "boolean"]
    title: str | None = Field(None, max_length=100)
    description: str = Field("", max_length=300)
    format: Literal["money", "date", "partial-date", "year"] | None = None
    enum: list[str] | None = Field(None, min_length=1, max_length=20)
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = Field(None, alias="exclusiveMinimum")
    exclusive_maximum: float | None = Field(None, alias="exclusiveMaximum")
    pattern: str | None = Field(None, max_length=200)
    min_length: int | None = Field(None, alias="minLength", ge=0, le=1000)
    max_length: int | None = Field(None, alias="maxLength", ge=1, le=1000)
    question: str | None = Field(None, alias="x-question", min_length=3, max_length=300)
    keywords: _Words = Field(default_factory=list, alias="x-keywords", max_length=20)
    cues: _Words = Field(default_factory=list, alias="x-cues", max_length=20)
    text: Literal["person", "place", "phrase"] = Field("phrase", alias="x-text")
    synonyms: dict[str, _Words] = Field(default_factory=dict, alias="x-synonyms", max_length=20)
    on_event: dict[str, Scalar] = Field(default_factory=dict, alias="x-on-event", max_length=len(EVENT_NAMES))
    temporal: Literal["past", "present", "future"] | None = Field(None, alias="x-temporal")
    freshness_days: int | None = Field(None, alias="x-freshness-days", ge=1, le=36500)
    per: Literal["year", "month", "week"] | None = Field(None, alias="x-per")
    unit: str | None = Field(None, alias="x-unit", min_length=1, max_length=20)
    """The unit a quantity is stored in (``kg``, ``cm``, ``month``, ``year``): a reply in another is converted."""

    @field_validator("keywords", "cues")
    @classmethod
    def _short_words(cls, value: list[str]) -> list[str]:
        return _lower_words(value, "keyword")

    @field_validator("enum")
    @classmethod
    def _enum_words(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _lower_words(value, "enum value")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern is not a regular expression: {exc}") from None
        return value

    @field_validator("on_event")
    @classmethod
    def _known_events(cls, value: dict[str, Scalar]) -> dict[str, Scalar]:
        unknown = sorted(set(value) - set(EVENT_NAMES))
        if unknown:
            raise ValueError(f"unknown event {unknown[0]!r} (events: {', '.join(EVENT_NAMES)})")
        return value

    @model_validator(mode="after")
    def _format_fits_type(self) -> FieldSchema:
        if self.format == "money" and self.type not in ("integer", "number"):
            raise ValueError("format money needs type number or integer")
        if self.format == "year" and self.type != "integer":
            raise ValueError("format year needs type integer")
        if (self.format in ("date", "partial-date") or self.enum) and self.type != "string":
            raise ValueError("format date, partial-date and enum need type string")
        unknown = sorted(set(value.lower() for value in self.synonyms) - set(self.enum or []))
        if unknown:  # enum values are lower-cased: a synonym of "A+" names "a+"
            raise ValueError(f"x-synonyms names {unknown[0]!r}, which is not an enum value")
        self.synonyms = {value.lower(): _lower_words(words, "synonym") for value, words in self.synonyms.items()}
        return self

    @property
    def kind(self) -> Kind:
        """What the resolver looks for: boolean, money, number, year, date, choice or text."""
        if self.type == "boolean":
            return "boolean"
        if self.type in ("integer", "number"):
            return "money" if self.format == "money" else "year" if self.format == "year" else "number"
        return "date" if self.format in ("date", "partial-date") else "choice" if self.enum else "text"

    def json_schema(self) -> dict[str, Any]:
        """The property as plain JSON Schema (the ``x-`` keys and titles left out): what a value is
        validated against."""
        keys = ("type", "format", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern",
                "minLength", "maxLength")
        dumped = self.model_dump(by_alias=True, exclude_none=True)
        return {key: dumped[key] for key in keys if key in dumped}


class NodeSchema(BaseModel):
    """One node: a flat object schema whose title is the node's name."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_uri: str | None = Field(None, alias="$schema", max_length=200)
    id: str | None = Field(None, alias="$id", max_length=200)
    title: str = Field(max_length=40)
    description: str = Field("", max_length=500)
    type: Literal["object"] = "object"
    properties: dict[str, FieldSchema] = Field(min_length=1, max_length=30)
    required: list[str] = Field(default_factory=list, max_length=30)
    priority_on: list[str] = Field(default_factory=list, alias="x-priority-on", max_length=len(EVENT_NAMES))
    priority: int = Field(50, alias="x-priority", ge=0, le=100)
    goal_keywords: _Words = Field(default_factory=list, alias="x-goal-keywords", max_length=30)
    always: bool = Field(False, alias="x-always")
    freshness_days: int | None = Field(None, alias="x-freshness-days", ge=1, le=36500)

    @field_validator("goal_keywords")
    @classmethod
    def _goal_words(cls, value: list[str]) -> list[str]:
        return _lower_words(value, "goal keyword")

    @field_validator("properties")
    @classmethod
    def _field_names(cls, value: dict[str, FieldSchema]) -> dict[str, FieldSchema]:
        for name in value:
            if not name.isidentifier() or len(name) > 40:
                raise ValueError(f"property {name[:50]!r} must be an identifier of at most 40 characters")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> NodeSchema:
        missing = [name for name in self.required if name not in self.properties]
        if missing:
            raise ValueError(f"required names {missing[0]!r}, which is not a property")
        unknown = sorted(set(self.priority_on) - set(EVENT_NAMES))
        if unknown:
            raise ValueError(f"x-priority-on names unknown event {unknown[0]!r} (events: {', '.join(EVENT_NAMES)})")
        return self

    def question(self, field: str) -> str:
        """How the info role asks for ``field``: its x-question, else from its description."""
        spec = self.properties[field]
        if spec.question:
            return spec.question
        about = spec.description or spec.title or field.replace("_", " ")
        options = f" ({', '.join(spec.enum)})" if spec.enum else ""
        return f"{self.title}: {about.rstrip('.?')}{options}?"

    def freshness(self, field: str) -> int | None:
        """After how many days a held value of ``field`` is confirmed again (None: never)."""
        return self.properties[field].freshness_days or self.freshness_days


def load_schema(nodes_dir: Path, name: str) -> NodeSchema:
    """One node's schema, ``nodes_dir/<name>.json`` or ``.toml``; its title must be ``name``.

    Raises:
        ConfigError: missing (or both forms), too large, not JSON/TOML, or does not validate.
    """
    candidates = [nodes_dir / f"{name}{suffix}" for suffix in (".json", ".toml")]
    found = [path for path in candidates if path.is_file()]
    if len(found) != 1:
        what = "both" if found else "neither"
        raise ConfigError(f"node {name}: {what} of {candidates[0]} and {candidates[1].name} exist(s)",
                          hint=f"give each node exactly one schema file; {HINT}")
    path = found[0]
    schema = _validated(path, read_bounded(path, MAX_SCHEMA_BYTES, HINT))
    if schema.title != name:
        raise ConfigError(f"{path}: title {schema.title!r} is not the node's name {name!r}", hint=HINT)
    return schema


def read_bounded(path: Path, max_bytes: int, hint: str) -> object:
    """A small JSON or TOML data file of a target, read within bounds; one line if it is bad.

    Raises:
        ConfigError: too large, unreadable, not JSON/TOML, or nested beyond what the format needs.
    """
    if path.stat().st_size > max_bytes:
        raise ConfigError(f"{path} is larger than {max_bytes // 1024} KiB", hint=hint)
    try:
        raw = path.read_bytes()
        if path.suffix == ".json":
            return loads_bounded(raw, JSONBounds(max_bytes, max_depth=6, max_values=5000))
        return tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({type(exc).__name__})", hint=hint) from exc
    except (ValueError, RecursionError) as exc:  # BoundedJSONError and TOMLDecodeError are ValueErrors
        raise ConfigError(f"{path} is not valid {path.suffix[1:].upper()}: {str(exc).splitlines()[0][:150]}",
                          hint=hint) from exc


def _validated(path: Path, document: object) -> NodeSchema:
    try:
        return NodeSchema.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])[:100] or "schema"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{path}: {where}: {message}", hint=HINT) from exc
