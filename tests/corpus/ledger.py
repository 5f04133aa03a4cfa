"""The transactions of one synthetic statement, made deterministically from a seed.

Amounts are integer cents so balances never drift; descriptions are built from an invented
vocabulary (no real merchant or bank names) and trimmed so that, at the PDF's font and the
description column's width, they wrap onto at most ``spec.wrap_lines`` lines. No description
uses the words of balance or summary rows ("balance", "total", "forward"), so telling those
rows apart is a question of layout, not luck.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta

from tests.corpus.specs import BankSpec
from tests.corpus.textfit import description_width, wrap

PEOPLE = (
    "Asha Verma",
    "Tomas Lindqvist",
    "Mei Tanaka",
    "Ravi Kulkarni",
    "Olu Adeyemi",
    "Clara Moss",
    "Ivan Petrov",
    "Nadia Haddad",
    "Sam Okafor",
    "Lena Fischer",
)
MERCHANTS = (
    "Greenleaf Grocers",
    "Bluefin Fuel",
    "Corner Pharmacy",
    "Metro Cinemas",
    "Orchard Market",
    "Quickcab Rides",
    "Papertrail Books",
    "Sunrise Bakery",
    "Hilltop Hardware",
    "Northwind Travel",
)
UTILITIES = ("City Power", "Clearwater Utilities", "Skyline Telecom", "Beacon Gas")
EMPLOYERS = ("Lumen Systems Ltd", "Harbor Logistics", "Pinecrest Labs", "Vega Analytics")
PURPOSES = (
    "monthly rent",
    "school fees for the autumn term",
    "shared holiday costs",
    "repayment of the personal loan",
    "household expenses",
    "the annual club membership",
    "furniture bought from the classifieds",
    "medical bills of last month",
)
DEBITS = (
    "Card purchase {m}",
    "UPI payment to {p}",
    "ATM cash withdrawal {c}",
    "Electricity bill {u}",
    "Mobile recharge {u}",
    "Direct debit {u}",
    "Standing order to {p}",
    "Insurance premium {u}",
    "Loan instalment {n}",
    "Online shopping {m}",
)
CREDITS = (
    "Salary credit {e}",
    "NEFT transfer from {p}",
    "Interest credit",
    "Refund from {m}",
    "Cheque deposit {c}",
    "Dividend {e}",
    "IMPS from {p}",
)
CITIES = ("Riverside", "Old Town", "Market Street", "Station Road", "Hill View")
LONG_TAIL = " ref {n} for {purpose} as agreed with {p} on invoice {n2}"


@dataclass(frozen=True)
class Transaction:
    """One transaction: signed cents (credits positive) and the balance after it."""

    date: date
    value_date: date
    description: str
    ref: str
    cents: int
    balance: int


@dataclass(frozen=True)
class Statement:
    """A statement's transactions and the facts around them."""

    account_holder: str
    account_number: str
    opening_balance: int
    start: date
    end: date
    transactions: tuple[Transaction, ...]

    @property
    def closing_balance(self) -> int:
        """The balance after the last transaction."""
        return self.transactions[-1].balance if self.transactions else self.opening_balance


def make_statement(spec: BankSpec, seed: int) -> Statement:
    """The statement of ``spec`` for ``seed``: the same inputs always give the same statement."""
    rng = random.Random(f"sandloop-corpus:{seed}:{spec.name}")
    start = date(2023 + rng.randrange(2), 1 + rng.randrange(12), 1)
    balance = rng.randrange(5_000_00, 90_000_00)
    balance -= 0 if spec.decimals else balance % 100
    opening = balance
    day = start
    transactions = []
    for index in range(spec.rows):
        day += timedelta(days=rng.choice((0, 0, 1, 1, 2)))
        cents = _amount(rng, balance)
        if not spec.decimals:  # whole units only: a currency without minor units
            cents = (cents // 100 or 1) * 100 if cents > 0 else -((-cents // 100 or 1) * 100)
        balance += cents
        transactions.append(
            Transaction(
                date=day,
                value_date=day + timedelta(days=rng.choice((0, 0, 0, 1, 2))),
                description=_description(rng, spec, credit=cents > 0),
                ref=_ref(rng, spec.ref_style, index),
                cents=cents * spec.amount_scale,
                balance=balance * spec.amount_scale,
            )
        )
    statement = Statement(
        account_holder=rng.choice(PEOPLE),
        account_number=f"{rng.randrange(10**11, 10**12)}",
        opening_balance=opening * spec.amount_scale,
        start=start,
        end=day,
        transactions=tuple(transactions),
    )
    return overdrawn(statement) if spec.overdrawn else statement


def overdrawn(statement: Statement) -> Statement:
    """The same statement on an account that opens in credit and goes overdrawn (issue 35):
    every balance lowered by the amount halfway between the opening and the lowest balance."""
    lowest = min(t.balance for t in statement.transactions)
    shift = lowest + (statement.opening_balance - lowest) // 2
    moved = tuple(replace(t, balance=t.balance - shift) for t in statement.transactions)
    return replace(statement, opening_balance=statement.opening_balance - shift, transactions=moved)


def split_periods(statement: Statement, periods: int) -> list[Statement]:
    """The statement cut into ``periods`` consecutive statements of (nearly) equal length,
    each opening with the balance the one before it closed with."""
    txns = statement.transactions
    cuts = [round(i * len(txns) / periods) for i in range(periods + 1)]
    parts = []
    for first, last in zip(cuts, cuts[1:], strict=False):
        chunk = txns[first:last]
        opening = txns[first - 1].balance if first else statement.opening_balance
        start = chunk[0].date if first else statement.start
        parts.append(replace(statement, opening_balance=opening, start=start,
                             end=chunk[-1].date, transactions=chunk))
    return parts


def _amount(rng: random.Random, balance: int) -> int:
    """A signed amount in cents; a debit never takes the balance below 100.00."""
    scale = rng.choice((1_000, 5_000, 10_000, 10_000, 100_000, 1_000_000, 2_500_000))
    cents = rng.randrange(100, scale) + rng.choice((0, 0, 50, rng.randrange(100)))
    credit = rng.random() < 0.4 or balance - cents < 100_00
    return cents if credit else -cents


def _description(rng: random.Random, spec: BankSpec, *, credit: bool) -> str:
    """A narration that fits the description column in ``spec.wrap_lines`` lines."""
    template = rng.choice(CREDITS if credit else DEBITS)
    text = template.format(
        m=rng.choice(MERCHANTS),
        p=rng.choice(PEOPLE),
        u=rng.choice(UTILITIES),
        e=rng.choice(EMPLOYERS),
        c=rng.choice(CITIES),
        n=rng.randrange(10, 99),
    )
    if spec.wrap_lines > 1 and rng.random() < 0.45:
        text += LONG_TAIL.format(
            n=rng.randrange(1000, 9999),
            purpose=rng.choice(PURPOSES),
            p=rng.choice(PEOPLE),
            n2=rng.randrange(100, 999),
        )
    return fit(text, spec)


def fit(text: str, spec: BankSpec) -> str:
    """``text`` without its last words until it wraps onto at most ``spec.wrap_lines`` lines."""
    words = text.split()
    width = description_width(spec)
    while len(words) > 1 and len(wrap(" ".join(words), width)) > spec.wrap_lines:
        words.pop()
    return " ".join(words)


def _ref(rng: random.Random, style: str, index: int) -> str:
    """A reference in ``style``; ``mixed`` starts with a zero-padded number and a code."""
    if style == "utr":
        return str(rng.randrange(10**11, 10**12))
    if style == "cheque":
        return f"{rng.randrange(1, 10**6):06d}" if rng.random() < 0.15 else ""
    if index == 0:
        return f"{rng.randrange(1, 10**5):06d}"  # leading zero: only a string keeps it
    kind = rng.choice(("digits", "upi", "neft", "chq"))
    number = rng.randrange(1, 10**6)
    return {
        "digits": f"{number:06d}",
        "upi": f"UPI/{number:06d}",
        "neft": f"NEFT-N{number:06d}",
        "chq": f"CHQ{number:06d}",
    }[kind]
