"""The engine that runs the service's runs: queue → worker → fork → container → journal → end.

A worker (:mod:`.workers`) claims a queued run from the store, starts it as its own
``python -m controller run`` (or ``check``) process (:mod:`.child` says which command, with
which environment), forked from a warm parent that imported everything once (:mod:`.launch`,
:mod:`.warm_child`), copies the process's lines and nodes into the store's journal
(:mod:`.journal`) and records how it ended; :mod:`.housekeeping` removes what ended runs left.

The HTTP side (``controller.entry.service``) reaches this package only through the names below
(an import-linter contract in ``pyproject.toml``); the inner modules are the engine's own.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.runner.dispatch.child import SUBMISSIONS, command, is_check, resumable, scrubber
    from controller.runner.dispatch.housekeeping import remove_kept, remove_upload
    from controller.runner.dispatch.journal import CONSOLE_FILE, MAX_LINE, Scrubber
    from controller.runner.dispatch.workers import Command, RunWorkers

#: Each public name and the inner module that has it, imported at first use: the warm parent
#: imports :mod:`.warm_child`, and so this package, and must not import the workers' store and
#: engine with it (it would hold them in every run's fork).
PUBLIC = {"SUBMISSIONS": "child", "command": "child", "is_check": "child", "resumable": "child",
          "scrubber": "child", "remove_upload": "housekeeping",
          "remove_kept": "housekeeping", "CONSOLE_FILE": "journal", "MAX_LINE": "journal",
          "Scrubber": "journal", "Command": "workers", "RunWorkers": "workers"}

__all__ = ["CONSOLE_FILE", "MAX_LINE", "SUBMISSIONS", "Command", "Scrubber", "RunWorkers", "command", "is_check",
           "remove_kept", "remove_upload", "resumable", "scrubber"]


def __getattr__(name: str) -> Any:
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
