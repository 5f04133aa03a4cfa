"""Bearer tokens: made with the system's CSPRNG, shown once, kept only as a hash.

A token carries 256 bits of randomness, so one unsalted SHA-256 is enough to make a leaked
store useless for signing in (there is nothing to guess); it also makes the hash an exact
lookup key.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from agents.ports.errors import ConfigError

TOKEN_PREFIX = "sbx_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def new_token() -> str:
    """A fresh token to hand to its owner once."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the store keeps of ``token``."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def check_token_name(name: str) -> str:
    """``name`` if it is a valid token (and owner) name.

    Raises:
        ConfigError: it is not.
    """
    if not _NAME.match(name):
        raise ConfigError(f"{name[:80]!r} is not a token name",
                          hint="letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64")
    return name
