"""``controller check --target NAME --module FILE...`` for the Idris agent: type-check
hand-written modules through the same sandbox, entrypoint and diagnostics reader as the
loop's typecheck node. Nothing is generated or repaired; each module gets its own fresh
sandbox, one after another (idris2 is memory-hungry)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agents.idris.typecheck import CheckResult, check_spec, run_check
from agents.ports.errors import TargetError
from agents.ports.events import Say
from agents.ports.sandbox import Sandbox, SandboxLimits

_MODULE_LINE = re.compile(r"^module\s+([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*)\s*$", re.M)


@dataclass(frozen=True)
class ModuleCheck:
    """One module's verdict."""

    path: str
    module: str
    check: CheckResult

    @property
    def passed(self) -> bool:
        """``idris2 --check`` found no error."""
        return self.check.outcome == "passed"


def module_name(path: Path, source: str) -> str:
    """The module's name from its ``module`` line, else its file name (``Model.idr`` → ``Model``)."""
    match = _MODULE_LINE.search(source)
    if match:
        return match[1]
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", path.stem):
        raise TargetError(f"{path} has no 'module' line and its name is not a module name",
                          hint="start the file with: module Domains.YourModel")
    return path.stem


def read_module(path: Path) -> str:
    """The module's source as UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"cannot read {path} as UTF-8 text ({type(exc).__name__})") from exc


def check_modules(sandbox: Sandbox, image: str, limits: SandboxLimits, target: str, paths: list[Path],
                  say: Say) -> list[ModuleCheck]:
    """Check every module in its own sandbox; a progress line per module."""
    sources = {path: read_module(path) for path in paths}
    outcomes = []
    for done, (path, source) in enumerate(sources.items(), start=1):
        module = module_name(path, source)
        labels = {"agent": "check", "target": target}
        check = run_check(sandbox, check_spec(image, module, source, limits, labels))
        outcomes.append(ModuleCheck(str(path), module, check))
        say(f"[{done}/{len(sources)}] {check.outcome.upper():<10} {path} "
                     f"({check.sandbox.wall_seconds:.2f}s)")
    return outcomes


def print_module_report(outcomes: list[ModuleCheck]) -> None:
    """Each module's verdict with its first diagnostics, then ``N passed, M failed``."""
    for outcome in outcomes:
        word = "PASS" if outcome.passed else "FAIL"
        print(f"{word} {outcome.path} ({outcome.module}): {outcome.check.message}")
        for diagnostic in outcome.check.errors[:5]:
            print(f"  {diagnostic.one_line()}")
    passed = sum(o.passed for o in outcomes)
    print(f"{passed} passed, {len(outcomes) - passed} failed")
