"""The expected ``result.csv`` of a synthetic statement: what a correct parser returns.

Written with pandas, so that ``pd.read_csv`` reads it back with the dtypes a person exporting
the statement would get: amounts as floats (empty where a transaction has none), dates as
text in the CSV's own format, references as strings unless every one is a number.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.corpus.ledger import Statement, Transaction
from tests.corpus.render import format_date
from tests.corpus.specs import BankSpec, Field

NAN = float("nan")


def transaction_values(txn: Transaction, spec: BankSpec) -> dict[Field, object]:
    """One transaction's value per field, as the CSV holds it."""
    amount = txn.cents / 100
    return {
        "date": format_date(txn.date, spec.csv_date),
        "value_date": format_date(txn.value_date, spec.csv_date),
        "description": txn.description,
        "ref": txn.ref or NAN,
        "debit": -amount if amount < 0 else NAN,
        "credit": amount if amount > 0 else NAN,
        "amount": amount,
        "marker": "DR" if amount < 0 else "CR",
        "balance": txn.balance / 100,
    }


def balance_values(label: str, day: object, cents: int, spec: BankSpec) -> dict[Field, object]:
    """An opening or closing balance row, for a CSV that keeps them."""
    text = format_date(day, spec.csv_date)
    return {
        "date": text,
        "value_date": text,
        "description": label,
        "ref": NAN,
        "debit": NAN,
        "credit": NAN,
        "amount": NAN,
        "marker": NAN,
        "balance": cents / 100,
    }


def expected_frame(statement: Statement, spec: BankSpec) -> pd.DataFrame:
    """The frame ``parse`` must return for this statement."""
    rows = [transaction_values(t, spec) for t in statement.transactions]
    if spec.keeps_balance_rows:
        if spec.opening_row != "none":
            rows.insert(
                0,
                balance_values("Opening Balance", statement.start, statement.opening_balance, spec),
            )
        if spec.closing_row != "none":
            rows.append(
                balance_values("Closing Balance", statement.end, statement.closing_balance, spec)
            )
    return pd.DataFrame([{name: row[f] for name, f in spec.csv} for row in rows])


def write_expected(path: Path, statement: Statement, spec: BankSpec) -> pd.DataFrame:
    """Write ``result.csv`` and return the frame ``pd.read_csv`` reads back from it."""
    expected_frame(statement, spec).to_csv(path, index=False, lineterminator="\n")
    return pd.read_csv(path)
