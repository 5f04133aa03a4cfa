"""``data/<name>/target.toml``: which agent a target is for, and how to run it.

    agent = "idris"                  # or "bank_parser" (the default without a target.toml), "intake" or "blueprint"
    project = "ServiceContract"      # idris: the module is Domains.ServiceContract
    document_type = "contract"       # idris: contract | invoice | approval | other
    document = "service_contract.pdf"  # idris, optional: else the folder's one .pdf/.txt/.md

    goal = "Plan my retirement"      # intake: the user's goal (what the decision role reasons about)
    nodes = ["Personal", "Income"]   # intake, optional: the nodes to collect (else the goal chooses them)
    subject = "Maria Silva"          # intake, optional: the person talked to (--subject wins)
    follows = "intake-day1"          # intake, optional: the conversation it continues (agents/target_chains.py)

    [limits]                         # all optional
    max_attempts = 5                 # --max-attempts on the command line wins
    timeout_seconds = 30             # per check / execution
    memory_mb = 1536

    [environment]                    # bank_parser, optional: the target's own runtime (issue 13)
    python = ["PyPDF2==3.0.1"]       # PEP 508 requirements from the index
    debian = ["ghostscript"]         # Debian packages a library needs
    as_of = "2025-08-31"             # resolve unpinned requirements as of this date

A target without ``target.toml`` is a bank-statement target, as before. A file that does
not validate is one clear line and exit 2, before anything runs.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.ports.environments import DeclaredEnv, declared_from_lists, parse_as_of
from agents.ports.errors import ConfigError, TargetError
from agents.ports.memory import check_subject
from agents.ports.sandbox import SandboxLimits

TARGET_FILE = "target.toml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
#: Documents the Idris agent reads; images are listed so that asking for one gets a clear "not yet".
DOCUMENT_SUFFIXES = (".pdf", ".txt", ".md")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".webp")
#: Names the generated module defines or the Prelude owns: a project may not take them.
RESERVED_PROJECTS = frozenset((
    "Money", "Date", "Period", "Amounts", "LineItem", "Party", "Role", "Client", "Contractor",
    "Supplier", "Recipient", "Drafter", "Approver", "Witness", "String", "Integer", "Int", "Nat",
    "Bool", "Maybe", "List", "Either", "So", "Type", "Dec", "Show", "Eq", "Ord", "IO", "Main",
))
_PROJECT = re.compile(r"^[A-Z][A-Za-z0-9]{0,63}$")
_FILE = re.compile(r"^[^/\\]+$")
#: An intake node's name: also its schema's file name (nodes/<Node>.json), so no dots or slashes.
_NODE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
#: Debian policy 5.6.1: lower case letters, digits, + - . ; two or more, alphanumeric first.
_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{1,62}$")
#: Largest target.toml read: the format has a handful of keys.
MAX_TARGET_FILE_BYTES = 64 * 1024


class TargetLimits(BaseModel):
    """Per-target limits; unset fields fall back to the settings (or the agent's defaults)."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int | None = Field(None, ge=1, le=50, description="Attempts before giving up.")
    timeout_seconds: float | None = Field(None, gt=0, le=3600, description="Per sandbox run.")
    memory_mb: int | None = Field(None, ge=64, le=65536, description="Sandbox memory limit.")


class TargetEnvironment(BaseModel):
    """``[environment]``: the packages a target's parsers run with (docs/environments.md)."""

    model_config = ConfigDict(extra="forbid")

    python: list[str] = Field(default_factory=list, max_length=200, description="PEP 508 index requirements.")
    debian: list[str] = Field(default_factory=list, max_length=50, description="Debian package names.")
    as_of: str | None = Field(None, description="Resolve unpinned requirements as of this date (YYYY-MM-DD).")

    @field_validator("python")
    @classmethod
    def _requirements(cls, value: list[str]) -> list[str]:
        for line in value:
            try:
                requirement = Requirement(line)
            except InvalidRequirement as exc:
                raise ValueError(f"not a PEP 508 requirement: {line[:80]!r} "
                                 f"({str(exc).splitlines()[0][:120]})") from exc
            if requirement.url:
                raise ValueError(f"only requirements from the package index, not URLs: {line[:80]!r}")
        return value

    @field_validator("debian")
    @classmethod
    def _debian_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _DEBIAN_NAME.match(name):
                raise ValueError(f"not a Debian package name: {name[:80]!r} (lower case letters, digits, "
                                 "'+', '-', '.'; 2 to 63 characters, starting with a letter or digit)")
        return value

    @field_validator("as_of")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        return None if value is None else parse_as_of(value)

    def declared(self) -> DeclaredEnv:
        """The declaration the environment provisioner takes."""
        return declared_from_lists(self.python, self.debian, TARGET_FILE)


class TargetConfig(BaseModel):
    """The validated ``target.toml``."""

    model_config = ConfigDict(extra="forbid")

    agent: Literal["bank_parser", "idris", "intake", "blueprint"] = "bank_parser"
    project: str | None = Field(None, description="idris: module Domains.<project>.")
    document_type: Literal["contract", "invoice", "approval", "other"] = "other"
    document: str | None = Field(None, description="idris: the document's file name in the folder.")
    goal: str | None = Field(None, min_length=1, max_length=500, description="intake: the user's goal.")
    nodes: list[str] | None = Field(None, min_length=1, max_length=32, description="intake: nodes to collect.")
    subject: str | None = Field(None, description="intake: the person talked to (run --subject wins).")
    follows: str | None = Field(None, description="intake: the target whose conversation this one continues.")
    limits: TargetLimits = Field(default_factory=TargetLimits)
    # bank_parser: the frame without result.csv; the agent validates it (agents.bank_parser.output_schema)
    output: dict[str, str] | None = Field(None, description="bank_parser: the frame without result.csv.")
    environment: TargetEnvironment | None = Field(None, description="bank_parser: the target's own runtime.")

    @field_validator("project")
    @classmethod
    def _project_name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _PROJECT.match(value):
            raise ValueError("project must be an Idris type name: a capital letter, then letters and "
                             "digits (e.g. ServiceContract)")
        if value in RESERVED_PROJECTS:
            raise ValueError(f"project {value!r} clashes with a type the module defines; pick another")
        return value

    @field_validator("nodes")
    @classmethod
    def _node_names(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if not _NODE.match(name):
                raise ValueError(f"node {name[:50]!r} is not a node name (a letter, then letters, digits or _; "
                                 "it names the schema file nodes/<Node>.json)")
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a node is listed twice")
        return value

    @field_validator("subject")
    @classmethod
    def _subject_name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            return check_subject(value)
        except ConfigError as exc:
            raise ValueError(exc.one_line()) from None

    @field_validator("follows")
    @classmethod
    def _followed_name(cls, value: str | None) -> str | None:
        if value is not None and not _NAME.match(value):
            raise ValueError(f"{value[:64]!r} is not a target name (the name of a folder beside this one: letters, "
                             "digits, - and _)")
        return value

    @field_validator("document")
    @classmethod
    def _plain_file(cls, value: str | None) -> str | None:
        if value is not None and (not _FILE.match(value) or value in (".", "..")):
            raise ValueError("document must be a file name in the target's folder, without folders")
        return value

    @model_validator(mode="after")
    def _agent_needs(self) -> TargetConfig:
        if self.agent == "idris" and self.project is None:
            raise ValueError("agent 'idris' needs project = \"YourProject\" (the module is Domains.YourProject)")
        if self.agent == "bank_parser" and (self.project or self.document):
            raise ValueError("project and document apply to agent = \"idris\" only")
        if self.agent == "idris" and self.environment is not None:
            raise ValueError("[environment] applies to agent = \"bank_parser\" only")
        if self.agent == "intake" and self.goal is None:
            raise ValueError("agent 'intake' needs goal = \"...\" (and may name its nodes = [\"Node\", ...])")
        if self.agent != "intake" and (self.goal is not None or self.nodes is not None):
            raise ValueError("goal and nodes apply to agent = \"intake\" only")
        if self.agent != "intake" and (self.subject is not None or self.follows is not None):
            raise ValueError("subject and follows apply to agent = \"intake\" only (a conversation's subject)")
        if self.agent == "intake" and (self.project or self.document or self.environment is not None):
            raise ValueError("project, document and [environment] do not apply to agent = \"intake\"")
        if self.agent == "blueprint" and (self.project or self.document or self.environment or self.output):
            raise ValueError("agent = \"blueprint\" takes only [limits]; its workflow is blueprint.json")
        return self


def target_limits(settings: SandboxLimits, limits: TargetLimits, defaults: Mapping[str, object]) -> SandboxLimits:
    """A target's sandbox limits: ``[limits]`` in target.toml, else ``SBX_SANDBOX__*`` when set,
    else the agent's ``defaults`` (e.g. the Idris agent's memory, the blueprint agent's timeout)."""
    update = {name: value for name, value in defaults.items() if name not in settings.model_fields_set}
    for name in ("timeout_seconds", "memory_mb"):
        value = getattr(limits, name)
        if value is not None:
            update[name] = value
    return settings.model_copy(update=update)


def known_targets(data_dir: Path) -> list[str]:
    """Names of the folders in ``data_dir`` that look like targets."""
    if not data_dir.is_dir():
        return []
    return sorted(p.name for p in data_dir.iterdir() if p.is_dir() and _NAME.match(p.name))


def check_target_name(name: str) -> str:
    """Return ``name`` if it is a plain name (letters, digits, ``-``, ``_``); else raise."""
    if not _NAME.match(name):
        raise TargetError(
            f"{name!r} is not a target name",
            hint="use the plain name of a folder in data/, e.g. icici (no slashes, no dots)",
        )
    return name


@dataclass(frozen=True)
class DocumentTarget:
    """A validated document target: its name, folder, document and configuration."""

    name: str
    folder: Path
    document: Path
    config: TargetConfig


def load_target_config(data_dir: Path, name: str) -> TargetConfig | None:
    """The target's ``target.toml``, validated; None when the target has none (or no folder).

    Raises:
        TargetError: a bad target name.
        ConfigError: a ``target.toml`` that is not TOML or does not validate.
    """
    path = data_dir / check_target_name(name) / TARGET_FILE
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_TARGET_FILE_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_TARGET_FILE_BYTES // 1024} KiB",
                          hint="a target.toml holds a few keys; see docs/idris.md, 'Targets'")
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({type(exc).__name__})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {str(exc).splitlines()[0][:200]}",
                          hint="see docs/idris.md, 'Targets'") from exc
    except RecursionError as exc:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path} nests arrays or tables too deeply", hint="see docs/idris.md, 'Targets'") from exc
    try:
        return TargetConfig.model_validate(document)
    except ValidationError as exc:
        raise invalid_target_file(path, exc) from exc


def agent_target_config(data_dir: Path, target: str, agent: str) -> TargetConfig:
    """``target``'s ``target.toml``, which must name ``agent``.

    Raises:
        TargetError: it has none, or it names another agent. ConfigError: as :func:`load_target_config`.
    """
    config = load_target_config(data_dir, target)
    if config is None or config.agent != agent:
        raise TargetError(f"{target} is not a target of the {agent} agent "
                          f"(its target.toml must say agent = \"{agent}\")")
    return config


def invalid_target_file(path: Path, exc: ValidationError, prefix: str = "") -> ConfigError:
    """One line for the first thing wrong in ``path`` (a section's own model: ``prefix`` its name)."""
    first = exc.errors()[0]
    where = ".".join((prefix, *(str(p) for p in first["loc"])) if prefix else (str(p) for p in first["loc"]))
    where = where[:100] or "target.toml"
    message = str(first["msg"]).removeprefix("Value error, ")
    doc = "docs/environments.md, 'A target's own environment'" if where.startswith("environment") else \
        "docs/intake.md" if where.startswith(("goal", "nodes", "subject", "follows")) else "docs/idris.md, 'Targets'"
    return ConfigError(f"{path}: {where}: {message}", hint=f"see {doc}")


def resolve_document_target(name: str, data_dir: Path, config: TargetConfig) -> DocumentTarget:
    """Find the target's folder and its one document.

    Raises:
        TargetError: unknown target, no document, several documents, or a named one missing.
    """
    folder = data_dir / check_target_name(name)
    if not folder.is_dir():
        known = ", ".join(known_targets(data_dir)) or "none"
        raise TargetError(f"unknown target {name!r}: there is no folder {folder}", hint=f"known targets: {known}")
    return DocumentTarget(name, folder, _document(folder, config), config)


def _document(folder: Path, config: TargetConfig) -> Path:
    if config.document is not None:
        path = folder / config.document
        if not path.is_file():
            raise TargetError(f"{folder / TARGET_FILE} names document {config.document!r}, which is not in {folder}")
        return path
    candidates = sorted(p for p in folder.iterdir()
                        if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES + IMAGE_SUFFIXES)
    if not candidates:
        raise TargetError(f"no document in {folder}", hint="put the reference document (.pdf, .txt or .md) there")
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        raise TargetError(f"{folder} holds several documents ({names})",
                          hint=f'name the one to use: document = "{candidates[0].name}" in {TARGET_FILE}')
    return candidates[0]


def collect_files(paths: list[str], suffix: str, noun: str) -> list[Path]:
    """Expand ``check``'s files and folders into the ``suffix`` files to check, in a stable order.

    Raises:
        TargetError: a path does not exist, or no such file was found.
    """
    hint = f"pass {suffix} files or folders that hold them"
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob(f"*{suffix}") if p.is_file() and "__pycache__" not in p.parts)
        elif path.is_file():
            found.append(path)
        else:
            raise TargetError(f"no {noun} file {path}", hint=hint)
    if not found:
        raise TargetError(f"no {suffix} files in {', '.join(paths)}", hint=hint)
    return list(dict.fromkeys(found))
