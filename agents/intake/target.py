"""An intake target: ``data/<name>/`` with target.toml, node schemas, a script and maybe expected.json.

    data/<name>/target.toml      agent = "intake", goal = "...", optionally nodes = ["Personal", ...],
                                 subject = "Maria Silva", follows = "intake-day1"
    data/<name>/nodes/<Node>.json (or .toml)   optional: a node of its own, or a shipped one overridden
    data/<name>/replies.txt      the scripted conversation: one reply per line, read in turn
    data/<name>/expected.json    optional: {"Node": {"field": value, ...}} the final graph must hold

Everything is read and validated before the run starts; anything wrong is one line, exit 2.
Replies are hostile text: the file, the number of replies and each reply are bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from agents.intake.catalogue import available, select
from agents.intake.models import Scalar
from agents.intake.patterns import MAX_REPLY_CHARS
from agents.intake.schema import HINT, NodeSchema, read_bounded
from agents.ports.errors import ConfigError, TargetError
from agents.targets import TargetConfig, check_target_name, known_targets

REPLIES_FILE = "replies.txt"
EXPECTED_FILE = "expected.json"
MAX_REPLIES = 200
MAX_REPLIES_BYTES = 256 * 1024
MAX_EXPECTED_BYTES = 64 * 1024
Expected = dict[str, dict[str, Scalar | None]]
_EXPECTED = TypeAdapter(Expected)


@dataclass(frozen=True)
class IntakeTarget:
    """A validated intake target."""

    name: str
    folder: Path
    goal: str
    nodes: tuple[str, ...]
    schemas: dict[str, NodeSchema]
    replies: tuple[str, ...]
    expected: Expected | None
    max_turns: int | None = None
    subject: str | None = None
    """The person talked to, as target.toml names them (``--subject`` wins)."""
    follows: str | None = None
    """The target whose conversation this one continues (target.toml ``follows``)."""


def load_intake_target(data_dir: Path, name: str, config: TargetConfig, *, scripted: bool = True) -> IntakeTarget:
    """Read and validate the whole target (without ``scripted``, replies.txt is not needed: the
    replies come from the terminal).

    Raises:
        TargetError: no such folder, no replies.txt. ConfigError: a file that does not validate.
    """
    folder = data_dir / check_target_name(name)
    if not folder.is_dir():
        targets = ", ".join(known_targets(data_dir)) or "none"
        raise TargetError(f"unknown target {name!r}: there is no folder {folder}", hint=f"known targets: {targets}")
    known = available(folder)
    nodes = tuple(select(known, config.nodes, config.goal or ""))
    schemas = {node: known[node] for node in nodes}
    expected = load_expected(folder / EXPECTED_FILE, schemas)
    replies = load_replies(folder / REPLIES_FILE) if scripted else ()
    return IntakeTarget(name, folder, config.goal or "", nodes, schemas, replies, expected, config.limits.max_attempts,
                        config.subject, config.follows)


def load_replies(path: Path) -> tuple[str, ...]:
    """The scripted replies: one per non-blank line; ``#`` starts a comment line.

    Raises:
        TargetError: the file is missing. ConfigError: too large, not UTF-8, too many or too long replies.
    """
    if not path.is_file():
        raise TargetError(f"no {path.name} in {path.parent}",
                          hint=f"write the user's replies there, one a line; {HINT}")
    if path.stat().st_size > MAX_REPLIES_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_REPLIES_BYTES // 1024} KiB", hint=HINT)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({type(exc).__name__})", hint=HINT) from exc
    replies = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not replies:
        raise ConfigError(f"{path} holds no reply", hint=HINT)
    if len(replies) > MAX_REPLIES:
        raise ConfigError(f"{path} holds {len(replies)} replies, more than {MAX_REPLIES}", hint=HINT)
    long = next((i for i, reply in enumerate(replies, 1) if len(reply) > MAX_REPLY_CHARS), None)
    if long is not None:
        raise ConfigError(f"{path}: reply {long} is longer than {MAX_REPLY_CHARS} characters", hint=HINT)
    return tuple(replies)


def load_expected(path: Path, schemas: dict[str, NodeSchema]) -> Expected | None:
    """expected.json (the final graph's node data), checked against the schemas; None without one.

    Raises:
        ConfigError: not JSON, not ``{"Node": {"field": value}}``, or naming a node or field that does not exist.
    """
    if not path.is_file():
        return None
    return check_expected(read_bounded(path, MAX_EXPECTED_BYTES, HINT), schemas, str(path))


def check_expected(document: object, schemas: dict[str, NodeSchema], where: str) -> Expected:
    """``document`` as expected facts: ``{"Node": {"field": value}}`` of the target's nodes and fields.

    Raises:
        ConfigError: not of that shape, or naming a node or field that does not exist.
    """
    try:
        expected = _EXPECTED.validate_python(document, strict=True)
    except ValidationError as exc:
        loc = ".".join(str(p) for p in exc.errors()[0]["loc"])[:100]
        raise ConfigError(f"{where}: {loc or 'document'}: must be {{\"Node\": {{\"field\": value}}}} with "
                          "numbers, text, true/false or null", hint=HINT) from exc
    for node, fields in expected.items():
        if node not in schemas:
            raise ConfigError(f"{where}: node {node[:40]!r} is not one of the target's nodes "
                              f"({', '.join(schemas)})", hint=HINT)
        unknown = sorted(set(fields) - set(schemas[node].properties))
        if unknown:
            raise ConfigError(f"{where}: {node}.{unknown[0][:40]} is not a property of {node}", hint=HINT)
    return expected
