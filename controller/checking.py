"""Moved: the bank-statement parsers' ``check`` lives in :mod:`agents.bank_parser.checking`
(each agent owns how its artefacts are checked; see agents/base.py). Kept importable for one
release."""

from agents.bank_parser.checking import (  # noqa: F401 - re-exports
    CheckOutcome,
    check_many,
    check_one,
    collect_parsers,
    print_report,
    read_parser,
)

__all__ = ["CheckOutcome", "check_many", "check_one", "collect_parsers", "print_report", "read_parser"]
