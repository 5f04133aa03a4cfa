"""Reading a graph memory back (the memory port, :mod:`agents.ports.memory`): a run's or a subject's.

The command line (``python -m controller memory RUN_ID | --subject NAME``) and the console's
intake page read it through these two functions, never by opening a file themselves. A
run's agent is found through the registry (its run.json names it); an agent that keeps no
memory (``AgentInfo.memory`` false) has none to show. A run with a subject shows the
subject's memory: every conversation with that person, this one among them.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

from sqlalchemy.exc import SQLAlchemyError

from agents.ports.errors import TargetError
from agents.ports.memory import LogEntry, MemoryView, check_subject
from agents.registry import get_agent
from controller.platform.memory_sql import memory_stores
from controller.platform.settings import Settings, state_dsn
from controller.runner.agent_runner import load_run


def run_memory(settings: Settings, run_id: str) -> MemoryView:
    """The graph memory run ``run_id`` wrote: its subject's, else its own.

    Raises:
        TargetError: no such run, or its agent keeps no graph memory.
    """
    run_dir, record = load_run(settings, run_id)
    agent = get_agent(str(record["agent"]))
    if not agent.info.memory:
        raise TargetError(f"run {run_id} is a run of the {agent.name} agent, which keeps no graph memory",
                          hint="memory reads the runs of a conversational agent (intake)")
    subject = record.get("subject")
    stores = memory_stores(settings)
    store = stores.for_subject(subject) if isinstance(subject, str) and subject else stores.for_run(run_dir.name)
    with closing(store):
        return store.view()


def run_turns(settings: Settings, run_id: str, limit: int) -> list[LogEntry]:
    """The first ``limit`` turns of run ``run_id``'s conversation log, read-only ([] when it has none
    or it cannot be read: the page shows the memory without them)."""
    try:
        return memory_stores(settings).read_conversation(run_id, "turns", limit)
    except (sqlite3.Error, SQLAlchemyError):
        return []


def subject_memory(settings: Settings, subject: str) -> MemoryView:
    """The graph memory of ``subject`` across all its conversations.

    Raises:
        ConfigError: not a subject name. TargetError: no conversation with that subject yet.
    """
    stores = memory_stores(settings)
    name = check_subject(subject)
    if not stores.has_subject(name):
        where = settings.runs_dir if state_dsn(settings) is None else "the state database (SBX_STATE_DSN)"
        raise TargetError(f"no memory of subject {name!r} in {where}",
                          hint="a conversation run with --subject NAME starts one")
    with closing(stores.for_subject(name)) as store:
        return store.view()
