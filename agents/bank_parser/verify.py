"""Self-consistency: does a parser's frame agree with what the statement prints about itself?

With no ``result.csv`` this is the only test a parser can pass; with one it runs too and is
reported beside the comparison. It is a pure function of the decoded frame (untrusted data,
read as numbers only) and the host's :class:`~.statement_facts.StatementFacts`: nothing
generated runs here.

The frame's columns are not named by the statement, so the roles (balance; one signed amount
or a debit and a credit column) are found by fit: every assignment of the frame's numeric
columns is tried and the one under which most consecutive balances agree wins. Then:

* ``rows``: the frame has rows;
* ``amounts``: every row but a leading/trailing balance row has an amount;
* ``running balance``: each balance = previous balance + the row's amount, to the cent
  (either row order: oldest or newest first);
* ``opening balance`` / ``closing balance``: the first and last rows agree with the printed
  balances; ``balance sum``: opening + amounts = closing (for tables without balances);
* ``totals``: the debits and credits add up to the printed totals;
* ``row count``: as many amount rows as transaction-like PDF lines (every page read);
* ``coverage``: every transaction-like PDF line is some row's amount (and balance), and,
  with every page read, every row is some line's. A row whose cell the parser repaired
  (issue 24: :mod:`.repairs`) still shows the misread cell in the PDF's OCR text, so it is
  matched by its other figure; a scan's line whose OCR lost a decimal point ("215" for
  2.15) matches the row with that figure and the line's other one.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from agents.bank_parser.repairs import (
    FOUND_RULE,
    WORD_RULE,
    Repair,
    read_repairs,
    repaired_rows,
    unread_rows,
)
from agents.bank_parser.statement_facts import StatementFacts, StatementLine

State = Literal["held", "failed", "not made"]
ARITHMETIC = ("running balance", "balance sum")
SHOWN_LINES = 3


@dataclass(frozen=True)
class Check:
    """One check: its name, whether it held, failed or could not be made, and why."""

    name: str
    state: State
    detail: str = ""


@dataclass(frozen=True)
class Verification:
    """The checks run on one frame; ``self_consistent`` is the verdict."""

    checks: tuple[Check, ...]
    roles: str = ""
    repairs: tuple[Repair, ...] = ()
    """The cells the parser says it repaired (issue 24), confirmed or not."""

    def _named(self, state: State) -> list[Check]:
        return [c for c in self.checks if c.state == state]

    @property
    def self_consistent(self) -> bool:
        """No check failed, the frame has rows, and at least one arithmetic check held."""
        held = {c.name for c in self._named("held")}
        return not self._named("failed") and "rows" in held and bool(held & set(ARITHMETIC))

    def summary(self) -> str:
        """One line: the verdict, the checks that held, failed and could not be made."""
        verdict = "self-consistent" if self.self_consistent else "not self-consistent"
        parts = [verdict]
        for state in ("failed", "held", "not made"):
            names = [c.name for c in self._named(state)]
            if names:
                parts.append(f"{state}: {', '.join(names)}")
        kinds = {WORD_RULE: "word(s)", FOUND_RULE: "row(s) found"}
        counts = Counter(kinds.get(r.rule, "cell(s)") for r in self.repairs if r.confirmed)
        if counts:
            parts.append("repaired: " + ", ".join(f"{counts[k]} {k}" for k in ("cell(s)", *kinds.values())
                                                  if counts[k]))
        return "; ".join(parts)

    def report(self) -> str:
        """Every check with its detail (saved with the attempt, shown to coders)."""
        lines = [f"self-consistency: {self.summary()}"]
        if self.roles:
            lines.append(f"columns read as: {self.roles}")
        lines += [f"  [{c.state}] {c.name}: {c.detail}" for c in self.checks]
        lines += [f"  [repair] {r.describe()}" for r in self.repairs]
        return "\n".join(lines)

    def record(self) -> dict[str, object]:
        """Plain data for summary.json and the attempt's files."""
        return {
            "self_consistent": self.self_consistent,
            "roles": self.roles,
            "checks": [{"name": c.name, "state": c.state, "detail": c.detail} for c in self.checks],
            "repairs": [r.record() for r in self.repairs],
        }


@dataclass(frozen=True)
class Roles:
    """Which frame columns hold the balance and the amount, and how the amount reads."""

    balance: str | None
    kind: Literal["signed", "split", "none"]
    amount: str | None = None
    sign: int = 1
    debit: str | None = None
    credit: str | None = None
    newest_first: bool = False

    def describe(self) -> str:
        """The roles in words."""
        if self.kind == "split":
            amounts = f"debit {self.debit!r}, credit {self.credit!r}"
        elif self.kind == "signed":
            amounts = f"amount {self.amount!r}" + (" (debits positive)" if self.sign < 0 else "")
        else:
            amounts = "no amount column"
        order = ", newest first" if self.newest_first else ""
        return f"balance {self.balance!r}, {amounts}{order}"


# --- reading the frame --------------------------------------------------------------------


def numeric_columns(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Column -> values in cents (NaN where empty) for every column that reads as amounts."""
    out: dict[str, np.ndarray] = {}
    for column in frame.columns:
        series = frame[column]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            text = series.astype("string").str.replace(r"[,\s$£€]", "", regex=True)
            series = pd.to_numeric(text, errors="coerce")
            if series.notna().sum() < 0.8 * frame[column].notna().sum() or series.notna().sum() == 0:
                continue
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        if np.nanmax(np.abs(values), initial=0) >= 1e11:  # account or UTR numbers, not money
            continue
        out[str(column)] = np.round(values * 100)
    return out


def amounts_of(roles: Roles, columns: dict[str, np.ndarray], rows: int) -> np.ndarray:
    """Each row's signed amount in cents (0 where the row has none)."""
    if roles.kind == "signed":
        return np.nan_to_num(columns[roles.amount]) * roles.sign  # type: ignore[index]
    if roles.kind == "split":
        debit = np.abs(np.nan_to_num(columns[roles.debit]))  # type: ignore[index]
        credit = np.abs(np.nan_to_num(columns[roles.credit]))  # type: ignore[index]
        return credit - debit
    return np.zeros(rows)


def chain_hits(balance: np.ndarray, amount: np.ndarray, newest_first: bool) -> tuple[int, int]:
    """(pairs that agree, pairs that could be checked) of consecutive balances."""
    if newest_first:
        balance, amount = balance[::-1], amount[::-1]
    previous, current, step = balance[:-1], balance[1:], amount[1:]
    known = ~np.isnan(previous) & ~np.isnan(current)
    agree = known & (np.abs(current - previous - step) < 0.5)
    return int(agree.sum()), int(known.sum())


def find_roles(columns: dict[str, np.ndarray], rows: int) -> Roles:
    """The role assignment under which most consecutive balances agree (names break ties)."""
    names = list(columns)
    options: list[Roles] = []
    for balance in names:
        others = [n for n in names if n != balance]
        options += [Roles(balance, "signed", amount=a, sign=s) for a in others for s in (1, -1)]
        options += [Roles(balance, "split", debit=d, credit=c)
                    for d, c in itertools.permutations(others, 2)]
    best: tuple[tuple[int, int], Roles] | None = None
    for base in options:
        for newest in (False, True):
            roles = Roles(**{**base.__dict__, "newest_first": newest})
            hits, _ = chain_hits(columns[roles.balance], amounts_of(roles, columns, rows), newest)  # type: ignore[index]
            key = (hits, _name_bonus(roles))
            if best is None or key > best[0]:
                best = (key, roles)
    if best is not None and best[0][0] > 0:
        return best[1]
    return _roles_without_chain(names)


def _name_bonus(roles: Roles) -> int:
    """Ties go to the assignment whose names say so (Balance, Debit/Withdrawal, Credit/Deposit)."""
    score = 2 * ("bal" in (roles.balance or "").lower())
    score += any(w in (roles.debit or "").lower() for w in ("debit", "withdraw", "out", "dr", "cargo"))
    score += any(w in (roles.credit or "").lower() for w in ("credit", "deposit", "in", "cr", "abono"))
    return score + (roles.kind == "signed" and roles.sign > 0) - (roles.kind == "split")


def _roles_without_chain(names: Sequence[str]) -> Roles:
    """No balance chain fits: guess the amount columns by name (for the sum and totals checks)."""
    balance = next((n for n in names if "bal" in n.lower()), None)
    rest = [n for n in names if n != balance]
    debit = next((n for n in rest if any(w in n.lower() for w in ("debit", "withdraw", "out"))), None)
    credit = next((n for n in rest if any(w in n.lower() for w in ("credit", "deposit", " in"))), None)
    if debit and credit:
        return Roles(balance, "split", debit=debit, credit=credit)
    if rest:
        return Roles(balance, "signed", amount=rest[0])
    return Roles(balance, "none")


# --- the checks ---------------------------------------------------------------------------


def verify(frame: pd.DataFrame, facts: StatementFacts, repairs: Sequence[Repair] = ()) -> Verification:
    """Run every check on ``frame`` against ``facts``; ``repairs``: what the parser repaired."""
    rows = len(frame)
    if rows == 0:
        return Verification((Check("rows", "failed", "the parser returned no rows"),), repairs=tuple(repairs))
    columns = numeric_columns(frame)
    roles = find_roles(columns, rows)
    amount = amounts_of(roles, columns, rows) if roles.kind != "none" else np.zeros(rows)
    balance = columns.get(roles.balance) if roles.balance else None
    ordered = _in_date_order(amount, balance, roles.newest_first)
    checks = [
        Check("rows", "held", f"{rows} row(s)"),
        _check_amounts(roles, amount),
        _check_chain(balance, amount, roles),
        *_check_ends(ordered, facts),
        _check_sum(ordered, facts, balance is not None),
        _check_totals(amount, facts, roles),
        _check_count(amount, facts, unread_rows(repairs)),
        _check_coverage(amount, balance, facts, repaired_rows(repairs), unread_rows(repairs)),
    ]
    return Verification(tuple(checks), roles.describe(), tuple(repairs))


def _in_date_order(
    amount: np.ndarray, balance: np.ndarray | None, newest_first: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    if not newest_first:
        return amount, balance
    return amount[::-1], (balance[::-1] if balance is not None else None)


def _check_amounts(roles: Roles, amount: np.ndarray) -> Check:
    if roles.kind == "none":
        return Check("amounts", "not made", "no amount column found")
    empty = [i for i, a in enumerate(amount) if a == 0 and 0 < i < len(amount) - 1]
    if empty:
        return Check("amounts", "failed", f"{len(empty)} row(s) without an amount, first row {empty[0]}")
    return Check("amounts", "held", "every transaction row has an amount")


def _check_chain(balance: np.ndarray | None, amount: np.ndarray, roles: Roles) -> Check:
    name = "running balance"
    if balance is None:
        return Check(name, "not made", "no balance column")
    if len(amount) < 2:
        return Check(name, "not made", "fewer than two rows")
    hits, known = chain_hits(balance, amount, roles.newest_first)
    if known == 0:
        return Check(name, "not made", "no two consecutive balances")
    if hits == known:
        return Check(name, "held", f"{hits} consecutive balance(s) agree to the cent")
    first = _first_break(balance, amount, roles.newest_first)
    return Check(name, "failed", f"{known - hits} of {known} balances disagree, first at row {first}")


def _first_break(balance: np.ndarray, amount: np.ndarray, newest_first: bool) -> int:
    n = len(balance)
    for i in range(1, n):
        j, k = (n - i - 1, n - i) if newest_first else (i, i - 1)
        if not (np.isnan(balance[j]) or np.isnan(balance[k])) and abs(balance[j] - balance[k] - amount[j]) >= 0.5:
            return j
    return -1


def _check_ends(ordered: tuple[np.ndarray, np.ndarray | None], facts: StatementFacts) -> list[Check]:
    amount, balance = ordered
    checks = []
    if facts.opening is None or balance is None or np.isnan(balance[0]):
        why = "no opening balance printed" if facts.opening is None else "no balance on the first row"
        checks.append(Check("opening balance", "not made", why))
    else:
        start = abs(balance[0] - amount[0])
        state: State = "held" if abs(start - facts.opening) < 0.5 else "failed"
        checks.append(Check("opening balance", state, f"first row starts from {start / 100:.2f}, "
                            f"the statement prints {facts.opening / 100:.2f}"))
    if facts.closing is None or balance is None or np.isnan(balance[-1]):
        why = "no closing balance printed" if facts.closing is None else "no balance on the last row"
        checks.append(Check("closing balance", "not made", why))
    else:
        end = abs(balance[-1])
        state = "held" if abs(end - facts.closing) < 0.5 else "failed"
        checks.append(Check("closing balance", state, f"last row ends at {end / 100:.2f}, "
                            f"the statement prints {facts.closing / 100:.2f}"))
    return checks


def _check_sum(ordered: tuple[np.ndarray, np.ndarray | None], facts: StatementFacts, has_balance: bool) -> Check:
    name = "balance sum"
    if has_balance:
        return Check(name, "not made", "the running balance covers it")
    if facts.opening is None or facts.closing is None:
        return Check(name, "not made", "opening and closing balances are not both printed")
    total = ordered[0].sum()
    fits = any(abs(abs(s * facts.opening + total) - facts.closing) < 0.5 for s in (1, -1))
    return Check(name, "held" if fits else "failed",
                 f"opening {facts.opening / 100:.2f} + amounts {total / 100:.2f} vs closing {facts.closing / 100:.2f}")


def _check_totals(amount: np.ndarray, facts: StatementFacts, roles: Roles) -> Check:
    """Debits and credits against the printed totals: the last printed, or the sum of all of
    them when the file joins several statement periods (one set of totals each)."""
    name = "totals"
    debits, credits = int(-amount[amount < 0].sum()), int(amount[amount > 0].sum())
    wanted: list[tuple[str, int, tuple[int, ...]]] = []
    for what, got, printed in (("debits", debits, facts.debit_totals), ("credits", credits, facts.credit_totals)):
        if printed:
            wanted.append((what, got, printed))
    bare = facts.bare_totals
    if not wanted and bare:
        # each line's two amounts stand in the table's column order: sum by position, then
        # compare without caring which column is the debits
        rows, last = sorted((debits, credits)), bare[-1]
        summed = [sum(p[0] for p in bare), sum(p[1] for p in bare)]
        fits = rows == sorted(last) or (len(bare) > 1 and rows == sorted(summed))
        return Check(name, "held" if fits else "failed",
                     f"debits {debits / 100:.2f} and credits {credits / 100:.2f} vs printed "
                     f"{last[0] / 100:.2f} and {last[1] / 100:.2f}{_over(len(bare))}")
    if not wanted or roles.kind == "none":
        return Check(name, "not made", "no totals printed")
    bad = [f"{what} {got / 100:.2f} != printed {printed[-1] / 100:.2f}"
           + (f" (or {sum(printed) / 100:.2f} over {len(printed)} totals lines)" if len(printed) > 1 else "")
           for what, got, printed in wanted if not _sums_to(got, printed)]
    if bad:
        return Check(name, "failed", "; ".join(bad))
    return Check(name, "held", ", ".join(f"{what} {got / 100:.2f}" for what, got, _ in wanted)
                 + _over(max(len(printed) for _, _, printed in wanted)))


def _sums_to(got: int, printed: tuple[int, ...]) -> bool:
    return got == printed[-1] or (len(printed) > 1 and got == sum(printed))


def _over(lines: int) -> str:
    return f" ({lines} totals lines)" if lines > 1 else ""


def _check_count(amount: np.ndarray, facts: StatementFacts, unread: frozenset[int] = frozenset()) -> Check:
    """Rows with an amount against transaction-like lines; rows found in a band read again
    (issue 46: lines the statement's text lacks) are left out and said."""
    name = "row count"
    if not facts.complete:
        return Check(name, "not made", f"only {facts.pages_read} page(s) of the PDF were read")
    if not facts.lines:
        return Check(name, "not made", "no transaction-like line found in the PDF's text")
    apart = sum(1 for i in unread if i < len(amount) and amount[i])
    rows = int((amount != 0).sum()) - apart
    state: State = "held" if rows == len(facts.lines) else "failed"
    note = f" (and {apart} row(s) found in the page read again)" if apart else ""
    return Check(name, state, f"{rows} row(s) with an amount, {len(facts.lines)} transaction-like PDF line(s){note}")


def _check_coverage(
    amount: np.ndarray, balance: np.ndarray | None, facts: StatementFacts, repaired: frozenset[int] = frozenset(),
    unread: frozenset[int] = frozenset(),
) -> Check:
    name = "coverage"
    if not facts.lines:
        return Check(name, "not made", "no transaction-like line found in the PDF's text")
    keys = Counter(_row_key(a, None if balance is None else balance[i])
                   for i, a in enumerate(amount) if a and i not in repaired | unread)
    loose = [{int(abs(a))} | ({int(abs(balance[i]))} if balance is not None and not np.isnan(balance[i]) else set())
             for i, a in enumerate(amount) if a and i in repaired - unread]
    missing = [line.text for line in facts.lines if not _match_line(line, keys, loose)]
    extra = sum(keys.values()) + len(loose)
    if missing:
        shown = " | ".join(missing[:SHOWN_LINES])
        return Check(name, "failed", f"{len(missing)} PDF line(s) match no row, e.g. {shown}")
    if extra and facts.complete:
        return Check(name, "failed", f"{extra} row(s) match no transaction-like PDF line")
    return Check(name, "held", f"all {len(facts.lines)} transaction-like PDF line(s) are rows")


def _match_line(line: StatementLine, keys: Counter[tuple[int, ...]], loose: list[set[int]]) -> bool:
    """Find the line's row and take it (one row per line): by its figures; a repaired row by
    its other figure; else a row whose amount or balance the line shows with its decimal point
    lost (the analysis reads a scan by OCR too: "215" for 2.15)."""
    key = _line_match(line.amounts, keys) or _lost_point_match(line, keys)
    if key is not None:
        keys[key] -= 1
        return True
    mended = next((j for j, figures in enumerate(loose) if figures & set(line.amounts)), None)
    if mended is not None:
        loose.pop(mended)
    return mended is not None


def _lost_point_match(line: StatementLine, keys: Counter[tuple[int, ...]]) -> tuple[int, ...] | None:
    """A row key (amount, balance) of which the line shows one figure as an amount and the
    other as bare digits: a decimal point the OCR did not see."""
    bare = {re.sub(r"\D", "", token) for token in re.findall(r"\d[\d,.']*\d", line.text)}
    for key, count in keys.items():
        if count > 0 and len(key) == 2:
            a, b = key
            if (a in line.amounts and str(b) in bare) or (b in line.amounts and str(a) in bare):
                return key
    return None


def _row_key(amount: float, balance: float | None) -> tuple[int, ...]:
    if balance is None or np.isnan(balance):
        return (int(abs(amount)),)
    return int(abs(amount)), int(abs(balance))


def _line_match(amounts: Sequence[int], keys: Counter[tuple[int, ...]]) -> tuple[int, ...] | None:
    """A row key the line's amounts show (amount and balance, or amount alone)."""
    for a, b in itertools.permutations(amounts, 2):
        if keys.get((a, b), 0) > 0:
            return (a, b)
    for a in amounts:
        if keys.get((a,), 0) > 0:
            return (a,)
    return None


def check_consistency(execution: object, analysis: object) -> Verification | None:
    """The checks for an attempt that returned a frame (None: no frame or no facts)."""
    frame = getattr(execution, "frame", None)
    facts = getattr(analysis, "facts", None)
    if frame is None or facts is None:
        return None
    stderr = getattr(getattr(getattr(execution, "sandbox", None), "stderr", None), "data", b"")
    return verify(frame, facts, read_repairs(stderr if isinstance(stderr, bytes) else b""))
