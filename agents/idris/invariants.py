"""Find the rules a document's numbers and dates obey by checking the numbers themselves.

* sums: an amount equal to the sum of two others (합계 = 공급가액 + 부가가치세);
* rates: an amount equal to another times a rate; a rate stated next to the amount
  (``부가가치세(10%)``) is tried against every other amount (exact, then rounded down or
  up to one unit, as VAT often is); an unstated rate counts only when it is a whole
  multiple of 5 % (so that 15,840,000 / 48,000,000 = 33 % is not reported as a rule);
* line items: each is quantity × unit price, and together they add up to an amount;
* dates: a period starts no later than it ends (a rule: reported even when broken), and a
  document's opening date (contract, issue, draft) comes before its other dates.

A stated rate that no amount satisfies, or a period that ends before it starts, is a
finding too: it is returned with ``holds=False`` and becomes a warning.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable
from fractions import Fraction

from agents.idris.model import Amount, DateField, Invariant, LineItem, Period, Rounding
from agents.idris.vocabulary import OPENING_DATE_ROLES


def amount_invariants(amounts: tuple[Amount, ...]) -> list[Invariant]:
    """Sum and rate relations among the amounts."""
    return _sums(amounts) + _rates(amounts)


def _sums(amounts: tuple[Amount, ...]) -> list[Invariant]:
    found = []
    for result in amounts:
        others = [a for a in amounts if a is not result and a.value > 0]
        for left, right in itertools.combinations(others, 2):
            if left.value + right.value == result.value:
                found.append(Invariant(
                    "sum", f"{result.label} = {left.label} + {right.label}",
                    f"{result.ident} = {left.ident} + {right.ident}", (result.ident, left.ident, right.ident)))
    return found


def _rates(amounts: tuple[Amount, ...]) -> list[Invariant]:
    found: list[Invariant] = []
    for result in amounts:
        if result.stated_rate is not None:
            found += _stated_rate(result, amounts)
        else:
            found += [inv for base in amounts if base is not result
                      if (inv := _unstated_rate(result, base)) is not None]
    return found


def _stated_rate(result: Amount, amounts: tuple[Amount, ...]) -> list[Invariant]:
    rate = result.stated_rate
    assert rate is not None
    for rounding in ("exact", "down", "up"):
        bases = [b for b in amounts if b is not result and _applies(b.value, rate, result.value, rounding)]
        if bases:
            return [_rate(result, base, rate, rounding, "stated", True) for base in bases]
    base = next((b for b in amounts if b.role == "supply"), None)
    return [_rate(result, base, rate, "exact", "stated", False)] if base is not None else []


def _unstated_rate(result: Amount, base: Amount) -> Invariant | None:
    if base.value <= 0 or not 0 < result.value < base.value:
        return None
    rate = Fraction(result.value, base.value)
    if (rate * 100).denominator != 1 or (rate * 100) % 5 != 0:
        return None
    return _rate(result, base, rate, "exact", "observed", True)


def _applies(base: int, rate: Fraction, result: int, rounding: Rounding) -> bool:
    exact = base * rate
    if rounding == "exact":
        return exact == result
    floor = exact.numerator // exact.denominator
    return result == (floor if rounding == "down" else -((-exact.numerator) // exact.denominator))


def _rate(result: Amount, base: Amount, rate: Fraction, rounding: Rounding, origin: str, holds: bool) -> Invariant:
    percent = f"{float(rate * 100):g}%"
    how = "" if rounding == "exact" else f", rounded {rounding}"
    return Invariant(
        "rate", f"{result.label} = {base.label} × {percent}{how}",
        f"{result.ident} = {base.ident} * {rate}{how}", (result.ident, base.ident),
        rate=rate, rounding=rounding, holds=holds, origin=origin,  # type: ignore[arg-type]
    )


def item_invariants(items: tuple[LineItem, ...], amounts: tuple[Amount, ...]) -> list[Invariant]:
    """Each item's amount = quantity × unit price; the items' total equals an amount."""
    if not items:
        return []
    found = [Invariant("product", "금액 = 수량 × 단가 (every line item)",
                       "lineAmount = unitPrice * quantity", ("lineAmount", "unitPrice", "quantity"),
                       holds=all(i.quantity * i.unit_price == i.amount for i in items))]
    total = sum(i.amount for i in items)
    for amount in amounts:
        if amount.value == total:
            found.append(Invariant("items_sum", f"Σ line items = {amount.label}",
                                   f"itemsTotal items = {amount.ident}", (amount.ident,)))
            break
    return found


def date_invariants(dates: tuple[DateField, ...], periods: tuple[Period, ...]) -> list[Invariant]:
    """Periods start no later than they end; opening dates precede the others."""
    found = [Invariant("order", f"{p.label}: 시작일 ≤ 종료일 (start ≤ end)",
                       f"{p.ident}.start <= {p.ident}.end", (f"{p.ident}.start", f"{p.ident}.end"),
                       holds=p.start <= p.end, origin="rule") for p in periods]
    for opening in (d for d in dates if d.role in OPENING_DATE_ROLES):
        for ident, label, when in _later_dates(opening, dates, periods):
            if opening.value <= when:
                found.append(Invariant("order", f"{opening.label} ≤ {label}",
                                       f"{opening.ident} <= {ident}", (opening.ident, ident)))
    return found


def _later_dates(opening: DateField, dates: tuple[DateField, ...],
                 periods: tuple[Period, ...]) -> Iterable[tuple[str, str, dt.date]]:
    for period in periods:
        yield f"{period.ident}.start", f"{period.label} 시작일", period.start
    for date in dates:
        if date is not opening and date.role not in OPENING_DATE_ROLES:
            yield date.ident, date.label, date.value
