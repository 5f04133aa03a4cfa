"""``python -m controller db {upgrade,current}``: the run store's schema (Alembic's migrations)."""

from __future__ import annotations

import argparse

from controller.platform.settings import Settings
from controller.platform.shared_state import prepare_state
from controller.platform.store import open_store
from controller.platform.store.factory import store_label
from controller.platform.store.migrate import current, head, upgrade


def command(args: argparse.Namespace, settings: Settings) -> int:
    """Upgrade the store (printing what changed) or print its revision; exit 0, 2 or 3 on errors."""
    store = open_store(settings, migrate=False)
    where = store_label(settings)
    if args.db_command == "current":
        revision = current(store.engine)
        print(f"{where}: revision {revision or 'none (empty)'}; this sandloop's newest is {head()}")
        return 0
    before = upgrade(store.engine, label=f"run store {where}")
    prepare_state(settings, store)  # SBX_STATE_DSN: LangGraph's checkpoint tables, the memory tables readable
    if before == head():
        print(f"==> {where} is at revision {head()}, this sandloop's newest: nothing to do")
    else:
        print(f"==> {where} upgraded from revision {before or 'none (empty)'} to {head()}")
    return 0
