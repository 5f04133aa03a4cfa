"""Node schemas as data: one JSON Schema (or its TOML form) per node, validated with pydantic.

The subset of JSON Schema an intake node uses: an ``object`` with flat ``properties`` of
type ``integer``, ``number``, ``string`` (optionally ``format: date`` or an ``enum``) or
``boolean``, and ``required``. Extension keys (JSON Schema allows ``x-`` keys) carry what the
deterministic roles need: ``x-question`` (how the info role asks), ``x-keywords`` (words that
tie a fact in a reply to the field), ``x-on-event`` (the value a life event sets, e.g. income
0 on ``job_loss``) and, on the node, ``x-priority-on`` (events that make the node urgent).
Every size is bounded; a schema that does not validate is one line and exit 2.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.bounded_json import JSONBounds, loads_bounded
from agents.intake.patterns import EVENT_NAMES
from agents.ports.errors import ConfigError

#: Largest schema file read.
MAX_SCHEMA_BYTES = 32 * 1024
NODES_DIR = "nodes"
HINT = "see README.md, 'Intake agent'"
Scalar = int | float | str | bool


class FieldSchema(BaseModel):
    """One property of a node."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["integer", "number", "string", "boolean"]
    title: str | None = Field(None, max_length=100)
    description: str = Field("", max_length=300)
    format: Literal["money", "date"] | None = None
    enum: list[str] | None = Field(None, min_length=1, max_length=20)
    minimum: float | None = None
    maximum: float | None = None
    question: str | None = Field(None, alias="x-question", min_length=3, max_length=300)
    keywords: list[str] = Field(default_factory=list, alias="x-keywords", max_length=20)
    on_event: dict[str, Scalar] = Field(default_factory=dict, alias="x-on-event", max_length=len(EVENT_NAMES))

    @field_validator("keywords", "enum")
    @classmethod
    def _short_words(cls, value: list[str] | None) -> list[str] | None:
        for word in value or []:
            if not 1 <= len(word) <= 40 or word != word.strip():
                raise ValueError(f"{word[:50]!r} must be 1 to 40 characters without surrounding blanks")
        return None if value is None else [word.lower() for word in value]

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
        if (self.format == "date" or self.enum) and self.type != "string":
            raise ValueError("format date and enum need type string")
        return self

    @property
    def kind(self) -> str:
        """What the resolver looks for: money, number, date, choice, text or boolean."""
        if self.type == "boolean":
            return "boolean"
        if self.type in ("integer", "number"):
            return "money" if self.format == "money" else "number"
        return "date" if self.format == "date" else "choice" if self.enum else "text"


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


def load_schemas(folder: Path, names: list[str]) -> dict[str, NodeSchema]:
    """The schema of every node in ``names``, from ``folder/nodes/<Node>.json`` or ``.toml``.

    Raises:
        ConfigError: a schema is missing, too large, not JSON/TOML, or does not validate.
    """
    return {name: load_schema(folder / NODES_DIR, name) for name in names}


def load_schema(nodes_dir: Path, name: str) -> NodeSchema:
    """One node's schema (see :func:`load_schemas`)."""
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
            return loads_bounded(raw, JSONBounds(max_bytes, max_depth=4, max_values=5000))
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
