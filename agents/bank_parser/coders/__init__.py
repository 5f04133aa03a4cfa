"""Coders: what writes parser code. ``make_coder`` picks one from the settings."""

from __future__ import annotations

from agents.bank_parser.coders.base import Coder, CoderExhausted, Feedback, FailureKind, GeneratedCode
from controller.errors import ConfigError
from controller.settings import Settings

__all__ = ["Coder", "CoderExhausted", "FailureKind", "Feedback", "GeneratedCode", "make_coder"]


def make_coder(settings: Settings) -> Coder:
    """The coder named by ``settings.coder`` (only ``offline`` so far)."""
    if settings.coder == "offline":
        from agents.bank_parser.coders.offline import OfflineCoder

        return OfflineCoder()
    raise ConfigError(f"unknown coder {settings.coder!r}", hint="use SBX_CODER=offline")
