"""A blueprint target: ``data/<name>/target.toml`` (``agent = "blueprint"``), ``blueprint.json``
and the fixture data files its tools and validators read.

Everything here is user input: sizes are checked before reading, JSON is decoded with the
bounded decoder, the model is validated with pydantic, and any mistake is one line (a
:class:`~agents.ports.errors.ConfigError` or :class:`~agents.ports.errors.TargetError`,
exit 2). A blueprint written in prose (``blueprint.md`` / ``blueprint.txt``, or a
``blueprint.json`` that is not JSON) needs an LLM to become a workflow
(:mod:`agents.blueprint.prose`); offline that is said in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from agents.blueprint.model import MAX_CODE_CHARS, Blueprint
from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.ports.errors import ConfigError, TargetError
from agents.targets import TARGET_FILE, check_target_name, known_targets

BLUEPRINT_FILE = "blueprint.json"
PROSE_FILES = ("blueprint.md", "blueprint.txt")
BLUEPRINT_BOUNDS = JSONBounds(max_bytes=256 * 1024, max_depth=7, max_values=5_000)  # 7: a decision rule's where
MAX_DATA_FILE_BYTES = 1 << 20
MAX_DATA_BYTES = 4 << 20
HINT = "see docs/blueprint.md"


@dataclass(frozen=True)
class BlueprintTarget:
    """A validated blueprint target: its name, folder, blueprint and data files (name → bytes)."""

    name: str
    folder: Path
    blueprint: Blueprint
    data: dict[str, bytes]


#: Turns prose (with the names of the target's data files) into a blueprint: an LLM's job.
ProseParse = Callable[[str, list[str], Path], Blueprint]


def load_target(data_dir: Path, name: str, *, prose: ProseParse | None = None) -> BlueprintTarget:
    """Find, read and validate a blueprint target (a prose blueprint through ``prose``, if given).

    Raises:
        TargetError: unknown target, no blueprint, missing or oversized data files.
        ConfigError: a blueprint that does not validate; a prose blueprint without an LLM.
    """
    folder = data_dir / check_target_name(name)
    if not folder.is_dir():
        known = ", ".join(known_targets(data_dir)) or "none"
        raise TargetError(f"unknown target {name!r}: there is no folder {folder}", hint=f"known targets: {known}")
    path, raw = _blueprint_source(folder)
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM (Windows editors) is not part of the document
    if _looks_like_json(raw):
        blueprint = parse_blueprint(raw, path)
    elif prose is None:
        raise ConfigError(f"{path} is a natural-language blueprint: without an LLM only JSON blueprints work offline",
                          hint=f"write {BLUEPRINT_FILE} ({HINT}), or configure an LLM (SBX_CODER)")
    else:
        blueprint = prose(raw.decode("utf-8", errors="replace"), data_file_names(folder), path)
    return BlueprintTarget(name, folder, with_code(blueprint, folder), read_data(folder, blueprint.data_files()))


def with_code(blueprint: Blueprint, folder: Path) -> Blueprint:
    """``blueprint`` with every ``code_file`` read into its tool's or validator's ``code`` (source is
    text: it is only ever handed to a sandbox).

    Raises:
        TargetError: a named source file is missing, too large or not UTF-8.
    """
    if not blueprint.code_files():
        return blueprint
    sources = {name: _source(folder, name) for name in blueprint.code_files()}
    tools = [t.model_copy(update={"code": sources[t.code_file], "code_file": None}) if t.code_file else t
             for t in blueprint.tools]
    validators = [v.model_copy(update={"code": sources[v.code_file], "code_file": None}) if v.code_file else v
                  for v in blueprint.qa.validators]
    return blueprint.model_copy(update={"tools": tools,
                                        "qa": blueprint.qa.model_copy(update={"validators": validators})})


def _source(folder: Path, name: str) -> str:
    path = folder / name
    if not path.is_file() or path.is_symlink():
        raise TargetError(f"the blueprint names code file {name!r}, which is not a file in {folder}", hint=HINT)
    try:
        return _read_capped(path, MAX_CODE_CHARS).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TargetError(f"{path} is not UTF-8 text", hint=HINT) from exc


def _blueprint_source(folder: Path) -> tuple[Path, bytes]:
    """blueprint.json, else blueprint.md or blueprint.txt (prose), with its bytes."""
    for name in (BLUEPRINT_FILE, *PROSE_FILES):
        path = folder / name
        if path.is_file():
            return path, _read_capped(path, BLUEPRINT_BOUNDS.max_bytes)
    raise TargetError(f"no {BLUEPRINT_FILE} in {folder}", hint=HINT)


def _looks_like_json(raw: bytes) -> bool:
    return raw.lstrip(b" \t\r\n")[:1] in (b"{", b"[")


def parse_blueprint(raw: bytes, path: Path) -> Blueprint:
    """Decode and validate a blueprint document; one line for the first thing wrong."""
    try:
        document = loads_bounded(raw, BLUEPRINT_BOUNDS)
    except BoundedJSONError as exc:
        raise ConfigError(f"{path} is not a valid blueprint: {exc}", hint=HINT) from exc
    try:
        return Blueprint.model_validate(document)
    except ValidationError as exc:
        raise invalid_blueprint(path, exc) from exc


def invalid_blueprint(path: Path, exc: ValidationError) -> ConfigError:
    """One line naming the first field that did not validate and why."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])[:100] or "blueprint"
    message = str(first["msg"]).removeprefix("Value error, ")[:200]
    return ConfigError(f"{path}: {where}: {message}", hint=HINT)


def data_file_names(folder: Path, limit: int = 50) -> list[str]:
    """The plain files a blueprint's tools could read (what a prose blueprint's model is told)."""
    skip = {TARGET_FILE, BLUEPRINT_FILE, *PROSE_FILES}
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in skip)[:limit]


def read_data(folder: Path, names: list[str]) -> dict[str, bytes]:
    """The named fixture files, each and all within their size caps."""
    data: dict[str, bytes] = {}
    for name in names:
        path = folder / name
        if name in (TARGET_FILE, BLUEPRINT_FILE) or not path.is_file() or path.is_symlink():
            raise TargetError(f"the blueprint names data file {name!r}, which is not a file in {folder}", hint=HINT)
        data[name] = _read_capped(path, MAX_DATA_FILE_BYTES)
    if sum(len(v) for v in data.values()) > MAX_DATA_BYTES:
        raise TargetError(f"the data files of {folder} hold more than {MAX_DATA_BYTES >> 20} MiB", hint=HINT)
    return data


def _read_capped(path: Path, cap: int) -> bytes:
    try:
        with path.open("rb") as handle:
            raw = handle.read(cap + 1)
    except OSError as exc:
        raise TargetError(f"cannot read {path} ({type(exc).__name__})") from exc
    if len(raw) > cap:
        raise TargetError(f"{path} is larger than {cap // 1024} KiB", hint=HINT)
    return raw
