"""Targets that follow one another: ``follows = "intake-day1"`` in a target.toml (seed 002's Day 1 → Day 2).

A conversation may continue another target's conversation with the same subject: it starts
from the facts the followed one left in the subject's graph memory. Such targets form
**chains** (``intake-day1 → intake-day2 → ...``):

- a target follows at most one target (the key takes one name), and is followed by at most
  one (a chain, not a tree: two followers of one conversation would each need that
  conversation's memory alone, and ``run --all`` runs a chain under one subject);
- the followed target is an intake target of the same data folder, and a chain never
  returns to a target it passed (a cycle);
- the targets of a chain that name a ``subject`` all name the same one.

Anything else is one line (:class:`~agents.ports.errors.ConfigError`, exit 2) before
anything runs. ``run --target`` walks its target's predecessors (:func:`predecessors`);
``run --all`` orders every target of the folder into chains (:func:`chains`) and runs each
chain in order, one target after the other, under a subject of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.ports.errors import ConfigError, PlatformError
from agents.ports.memory import subject_key
from agents.targets import TARGET_FILE, TargetConfig, known_targets, load_target_config

HINT = "see docs/intake.md (follows)"


@dataclass(frozen=True)
class Chain:
    """Targets to run in this order, the later ones continuing the earlier ones' conversations.

    Attributes:
        targets: The targets, the first one followed by the second, and so on (one target: a chain of one).
        subject: The subject the chain's targets name (None: none names one).
        conversation: Whether it is a conversation with a subject (a target follows another or names a subject).
    """

    targets: tuple[str, ...]
    subject: str | None = None
    conversation: bool = False


def predecessors(data_dir: Path, name: str) -> list[str]:
    """The targets ``name`` continues: the one it follows first, then the one that one follows, ...

    Raises:
        ConfigError: a followed target that is unknown or not an intake target, a cycle, two subjects.
        TargetError: a bad target name.
    """
    config = load_target_config(data_dir, name)
    found: list[str] = []
    named = (name, config.subject) if config is not None and config.subject is not None else None
    current = name
    while config is not None and config.follows is not None:
        followed = config.follows
        if followed == name or followed in found:
            raise ConfigError(f"{_where(data_dir, current)}: follows: a cycle: "
                              f"{' → '.join([name, *found, followed])} (each follows the next)", hint=HINT)
        config = _followed_config(data_dir, current, followed)
        named = _one_subject(data_dir, named, followed, config)
        found.append(followed)
        current = followed
    return found


def chains(data_dir: Path, names: Sequence[str]) -> list[Chain]:
    """``names`` (the folder's targets) as chains, ordered by their first target; every target in one.

    A target whose target.toml does not load, and which no other follows, is a chain of its own
    (its run reports why).

    Raises:
        ConfigError: as :func:`predecessors`, or two targets that follow the same one.
    """
    configs = {name: _config_or_none(data_dir, name) for name in names}
    follower: dict[str, str] = {}
    for name in names:
        config = configs[name]
        if config is None or config.follows is None:
            continue
        predecessors(data_dir, name)  # unknown, not intake, a cycle, two subjects: one line
        other = follower.setdefault(config.follows, name)
        if other != name:
            raise ConfigError(f"{other} and {name} both follow {config.follows}: a target is followed by one "
                              "target at most (a chain)", hint=HINT)
    firsts = [name for name, config in configs.items() if config is None or config.follows is None]
    return [_chain(first, follower, configs) for first in sorted(firsts)]


def _chain(first: str, follower: dict[str, str], configs: dict[str, TargetConfig | None]) -> Chain:
    targets = [first]
    while targets[-1] in follower:
        targets.append(follower[targets[-1]])
    declared = [c for c in (configs[t] for t in targets) if c is not None]
    subject = next((c.subject for c in declared if c.subject is not None), None)
    return Chain(tuple(targets), subject, len(targets) > 1 or subject is not None)


def _followed_config(data_dir: Path, current: str, followed: str) -> TargetConfig:
    if followed not in known_targets(data_dir):
        raise ConfigError(f"{_where(data_dir, current)}: follows: unknown target {followed!r} (no folder "
                          f"{data_dir / followed})",
                          hint=f"known targets: {', '.join(known_targets(data_dir)) or 'none'}")
    config = load_target_config(data_dir, followed)
    if config is None or config.agent != "intake":
        raise ConfigError(f"{_where(data_dir, current)}: follows: {followed} is not a target of the intake agent "
                          "(a conversation continues a conversation)", hint=HINT)
    return config


def _one_subject(data_dir: Path, named: tuple[str, str] | None, target: str,
                 config: TargetConfig) -> tuple[str, str] | None:
    """The first target of the chain that names a subject, and its subject, checked against ``target``'s."""
    if config.subject is None:
        return named
    if named is not None and subject_key(named[1]) != subject_key(config.subject):
        raise ConfigError(f"{_where(data_dir, named[0])}: subject: {named[0]} talks to {named[1]!r} but "
                          f"{target}, which it continues, to {config.subject!r}: a chain talks to one person",
                          hint=HINT)
    return named or (target, config.subject)


def _config_or_none(data_dir: Path, name: str) -> TargetConfig | None:
    try:
        return load_target_config(data_dir, name)
    except PlatformError:
        return None


def _where(data_dir: Path, name: str) -> Path:
    return data_dir / name / TARGET_FILE
