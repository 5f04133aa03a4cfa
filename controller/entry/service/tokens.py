"""``python -m controller tokens {add,list,remove}``: the service's bearer tokens."""

from __future__ import annotations

import argparse
import time

from agents.ports.errors import ConfigError
from controller.platform.settings import Settings
from controller.platform.store import open_store
from controller.platform.store.factory import store_label
from controller.platform.store.tokens import check_token_name, new_token, token_hash


def command(args: argparse.Namespace, settings: Settings) -> int:
    """Add (printing the token once), list or remove tokens; exit 0, or 2 for a usage error."""
    store = open_store(settings)
    if args.tokens_command == "add":
        name = check_token_name(args.name)
        token = new_token()
        store.add_token(name, token_hash(token), admin=args.admin)
        print(token)
        where = store_label(settings)
        print(f"==> token {name}{' (admin)' if args.admin else ''} added to {where}; "
              "it is shown only this once: keep it (the service stores only its hash)")
        return 0
    if args.tokens_command == "remove":
        if not store.remove_token(args.name):
            raise ConfigError(f"no token called {args.name[:80]!r}", hint="see: python -m controller tokens list")
        print(f"==> token {args.name} removed")
        return 0
    rows = store.tokens()
    for row in rows:
        made = time.strftime("%Y-%m-%d %H:%M", time.gmtime(row.created_at))
        print(f"{row.name:<24} {'admin' if row.admin else 'user':<6} created {made} UTC")
    if not rows:
        print("no tokens: the service answers anyone on loopback, and refuses other addresses")
    return 0
