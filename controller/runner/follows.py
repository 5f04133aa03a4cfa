"""A conversation that continues another (target.toml ``follows``) runs only after it, with the same subject.

The agent's plan says which conversation a run continues and with which subject
(:class:`agents.ports.run.Follows`); before anything runs (the CLI's ``run``, a service
accepting the run) the subject's graph memory must hold a conversation of that target:
otherwise the run would start from facts it does not have, and fail for no fault of its own.
The refusal is one line (exit 2; the service's 422) saying what to run first.
"""

from __future__ import annotations

import shlex
from contextlib import closing

from agents.ports.errors import TargetError
from agents.ports.run import Plan
from controller.platform.memory_sql import MemoryBackend


def require_followed(plan: Plan, stores: MemoryBackend) -> None:
    """Refuse ``plan`` when it continues a conversation its subject's memory does not hold.

    Raises:
        TargetError: no subject, or no conversation of the followed target in the subject's memory.
    """
    follows = plan.follows
    if follows is None:
        return
    first = f"python -m controller run --target {follows.target}"
    if follows.subject is None:
        raise TargetError(f"{plan.target} follows {follows.target}: it continues a conversation with a subject, "
                          "and none is named", hint=f"run {follows.target} first with --subject NAME: {first} "
                          f"--subject NAME; then {plan.target} with the same --subject")
    if follows.target not in _targets(stores, follows.subject):
        raise TargetError(f"{plan.target} follows {follows.target}, and subject {follows.subject!r} has no memory "
                          f"of {follows.target}", hint=f"run {follows.target} first with the same --subject: {first} "
                                                       f"--subject {shlex.quote(follows.subject)}")


def _targets(stores: MemoryBackend, subject: str) -> tuple[str, ...]:
    """The targets whose conversations wrote to ``subject``'s memory (none: no memory, and none is made)."""
    if not stores.has_subject(subject):
        return ()
    with closing(stores.for_subject(subject)) as store:
        return store.view().targets

