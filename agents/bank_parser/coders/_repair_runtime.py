"""Repair of OCR misreads guided by the statement's own running balance (issue 24).

A scan's parser carries these functions (copied like :mod:`._ocr_runtime`'s), and the host
imports them for its preview, so the rows previewed and the rows the parser returns are
repaired alike. Rules: standard library only, no module-level state, every setting through
``config``; rows are the raw rows of :mod:`._runtime` (cell texts in header order).

When the balance chain breaks, each amount and balance cell of the rows around the break
is offered a few *candidate readings*, one per rule (:func:`repair_candidates`):

* ``decimal point``: the cell's digits with the decimal point put back before the last two
  ("1242914" -> "12429.14", "215" -> "2.15");
* ``sign``: a lost minus ("724.03" -> "-724.03");
* ``parenthesis``: a lost half of "(724.03)";
* ``letters``: S, O and l (and s, o, I, |) read for 5, 0 and 1 inside a number;

and before any of these, in a scan's parser, ``re-read``: the cell read again alone, its crop
enlarged twice, as one line of text (``reread``, from :mod:`._ocr_runtime`).

A candidate is taken only when it is the *only* one, among every cell of every row of the
broken stretch, after which every link of that stretch holds to the cent: the edited row
agrees with the row before it *and* the row after it (a row at either end of the table
needs a printed opening/closing or brought-forward balance row as its other neighbour).
Two candidates that fit leave the rows as read. When none fits, two misreads may sit side
by side (neighbouring rows, or an amount and a balance on one row): then every *pair* of
readings of two cells of the stretch is tried, and the pair is taken only when it is the
only one that makes the stretch hold. No candidate ever changes a digit.
"""

from __future__ import annotations

import re
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

# Copied parsers carry these functions too; the host imports them from their module.
from agents.bank_parser.coders._runtime import (
    clean_number,
    is_transaction,
    row_values,
    signed_amount,
    tidy,
)

RawRow = tuple[list[str], float]


def repair_candidates(text: str, config: SimpleNamespace) -> list[tuple[str, str]]:
    """(rule, new cell text) for each rule that reads ``text`` as a different amount."""
    body = tidy(text)
    for token in config.currency_tokens:
        body = body.replace(token, "")
    body = body.strip()
    first = re.search(r"[0-9]", body)
    if first is None:
        return []
    confusable = "SsOolI|"
    start = first.start()
    while start > 0 and body[start - 1] in confusable + ".,' ":
        start -= 1
    end = max(m.end() for m in re.finditer(r"[0-9]", body))
    while end < len(body) and body[end] in confusable + ".,' ":
        end += 1
    core = body[start:end].strip()
    prefix = body[: body.index(core, start)]
    suffix = body[len(prefix) + len(core) :]  # spaces around the number stay where they were
    letters = core.translate(str.maketrans("SsOolI|", "5500111"))
    digits = re.sub(r"[^0-9]", "", letters)
    found: list[tuple[str, str]] = []
    if letters != core:
        found.append(("letters", prefix + letters + suffix))
    if len(digits) >= 3:
        found.append(
            (
                "decimal point",
                prefix + digits[:-2] + config.decimal_separator + digits[-2:] + suffix,
            )
        )
    if "-" not in body and "(" not in body and ")" not in body:
        found.append(("sign", "-" + body))
    if body.startswith("(") != body.endswith(")"):
        found.append(("parenthesis", "(" + body.strip("()") + ")"))
    before = clean_number(text, config)
    unique: list[tuple[str, str]] = []
    for rule, candidate in found:
        cleaned = clean_number(candidate, config)
        if (
            cleaned
            and cleaned != before
            and all(clean_number(c, config) != cleaned for _, c in unique)
        ):
            unique.append((rule, candidate))
    return unique


def chain_values(
    cells: list[str], config: SimpleNamespace
) -> tuple[Decimal | None, Decimal | None]:
    """(signed amount, balance) of a row; the amount is 0 when empty, None when unreadable;
    the balance is None when empty or unreadable."""
    signed, ok = signed_amount(cells, config)
    text = clean_number(cells[config.balance_index], config)
    balance = Decimal(text) if text else None  # clean_number's text always reads as a Decimal
    if not ok:
        return None, balance
    return (signed if signed is not None else Decimal(0)), balance


def link_holds(
    upper: tuple[Decimal | None, Decimal | None],
    lower: tuple[Decimal | None, Decimal | None],
    orientation: tuple[int, bool],
) -> bool:
    """Whether two rows printed one above the other agree: the later balance is the earlier
    balance plus the later row's amount (``sign`` -1: a balance that falls with credits)."""
    sign, newest_first = orientation
    earlier, later = (lower, upper) if newest_first else (upper, lower)
    if earlier[1] is None or later[1] is None or later[0] is None:
        return False
    return earlier[1] + sign * later[0] == later[1]


def chain_orientation(
    values: list[tuple[Decimal | None, Decimal | None]],
) -> tuple[int, bool] | None:
    """The reading (sign, newest first) under which most links hold; None unless at least
    half of them do (then the table is not understood well enough to repair it)."""
    links = len(values) - 1
    best: tuple[int, tuple[int, bool]] | None = None
    for orientation in ((1, False), (-1, False), (1, True), (-1, True)):
        held = sum(
            1 for k in range(1, len(values)) if link_holds(values[k - 1], values[k], orientation)
        )
        if best is None or held > best[0]:
            best = (held, orientation)
    if best is None or best[0] == 0 or 2 * best[0] < links:
        return None
    return best[1]


def amount_positions(config: SimpleNamespace) -> list[int]:
    """Header positions of the cells a repair may change: the amounts and the balance."""
    model = config.amounts or {}
    positions = [model[k] for k in ("debit", "credit", "amount") if isinstance(model.get(k), int)]
    return positions + [config.balance_index]


def chain_members(raw_rows: list[RawRow], config: SimpleNamespace) -> list[tuple[int, str]]:
    """The raw rows the balance chain runs through, in order, with their part in it.

    ``row``: a transaction; ``anchor``: a balance-only row (opening, brought or carried
    forward, closing), never edited; ``tentative``: not a transaction as read, but one
    after some candidate reading of an amount or balance cell (an S for a 5), or once a
    cell OCR garbled past every rule (``Tf 633.37``) reads as a number: only a re-read of
    that cell can then bring the row back.
    """
    members: list[tuple[int, str]] = []
    for index, (cells, _gap) in enumerate(raw_rows):
        if is_transaction(row_values(cells, config), cells, config):
            members.append((index, "row"))
        elif any(
            edited_transaction(cells, p, text, config)
            for p in amount_positions(config)
            for _r, text in [*repair_candidates(cells[p], config), *placeholder(cells[p], config)]
        ):
            members.append((index, "tentative"))
        elif balance_only(cells, config):
            members.append((index, "anchor"))
    return members


def placeholder(text: str, config: SimpleNamespace) -> list[tuple[str, str]]:
    """A stand-in number for a filled cell that reads as none (to ask whether the row would be a
    transaction with the cell read right); never a repair itself."""
    return [("placeholder", "0")] if tidy(text) and clean_number(text, config) is None else []


def edited_transaction(cells: list[str], position: int, text: str, config: SimpleNamespace) -> bool:
    """Whether the row is a transaction once cell ``position`` reads ``text``."""
    edited = [text if i == position else cell for i, cell in enumerate(cells)]
    return is_transaction(row_values(edited, config), edited, config)


def balance_only(cells: list[str], config: SimpleNamespace) -> bool:
    """A row with a readable balance and no amount: an opening/closing/forward balance."""
    amount, balance = chain_values(cells, config)
    return balance is not None and amount == 0


def broken_stretches(
    values: list[tuple[Decimal | None, Decimal | None]], orientation: tuple[int, bool]
) -> list[list[int]]:
    """Runs of chain positions joined by links that do not hold."""
    stretches: list[list[int]] = []
    for k in range(1, len(values)):
        if link_holds(values[k - 1], values[k], orientation):
            continue
        if stretches and stretches[-1][-1] == k - 1:
            stretches[-1].append(k)
        else:
            stretches.append([k - 1, k])
    return stretches


def stretch_fits(
    stretch: list[int],
    values: list[tuple[Decimal | None, Decimal | None]],
    orientation: tuple[int, bool],
) -> bool:
    """Whether every link of the stretch holds, and the one before it and after it."""
    first, last = max(stretch[0], 1), min(stretch[-1] + 1, len(values) - 1)
    return all(link_holds(values[k - 1], values[k], orientation) for k in range(first, last + 1))


def stretch_repairs(
    stretch: list[int],
    members: list[tuple[int, str]],
    raw_rows: list[RawRow],
    values: list[tuple[Decimal | None, Decimal | None]],
    orientation: tuple[int, bool],
    config: SimpleNamespace,
    reread: Any = None,
) -> list[tuple[int, int, str, str]]:
    """Every single edit (chain position, cell, rule, text) after which the stretch holds.

    With ``reread`` (an OCR parser's ``cell_reader``) each amount and balance cell of the
    stretch is first read again alone; only when no new reading fits are the candidate
    readings tried. An edited row needs a neighbour on both sides: the first and last rows
    of the chain are only repaired against an anchor row beyond them.
    """
    editable = editable_rows(stretch, members)
    fits: list[tuple[int, int, str, str]] = []
    for k, index in editable if reread is not None else []:
        cells = raw_rows[index][0]
        for position in amount_positions(config):
            text = new_reading(cells, index, position, config, reread)
            if text and edits_fit(((k, position, "re-read", text),), stretch, members, raw_rows, values, orientation,
                                  config):
                fits.append((k, position, "re-read", text))
    if fits:
        return fits
    for k, index in editable:
        cells = raw_rows[index][0]
        for position in amount_positions(config):
            for rule, text in repair_candidates(cells[position], config):
                if edits_fit(((k, position, rule, text),), stretch, members, raw_rows, values, orientation, config):
                    fits.append((k, position, rule, text))
    return fits


def new_reading(cells: list[str], index: int, position: int, config: SimpleNamespace, reread: Any) -> str | None:
    """The cell read again (``reread``), when it reads as another number than before."""
    text = reread(index, position) if reread is not None and cells[position].strip() else None
    if text and clean_number(text, config) not in (None, clean_number(cells[position], config)):
        return str(text)
    return None


def editable_rows(stretch: list[int], members: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """(chain position, raw row) of the stretch's rows a repair may edit: no anchor, and not
    the chain's first or last member (each edited row needs a neighbour on both sides)."""
    return [(k, members[k][0]) for k in stretch if members[k][1] != "anchor" and 0 < k < len(members) - 1]


def pair_repairs(
    stretch: list[int],
    members: list[tuple[int, str]],
    raw_rows: list[RawRow],
    values: list[tuple[Decimal | None, Decimal | None]],
    orientation: tuple[int, bool],
    config: SimpleNamespace,
    reread: Any = None,
    limit: int = 80,
) -> list[tuple[tuple[int, int, str, str], tuple[int, int, str, str]]]:
    """Every pair of edits of two cells of the stretch after which it holds: two misreads side
    by side, which no single edit mends. Each cell offers its re-read (when it read otherwise)
    and its candidate readings. A stretch offering more than ``limit`` readings is left: it is
    too long (a page read badly) for two edits to explain, and coincidences grow with it."""
    import itertools  # lazy: each function is copied alone into generated parsers

    options: list[tuple[int, int, str, str]] = []
    for k, index in editable_rows(stretch, members):
        cells = raw_rows[index][0]
        for position in amount_positions(config):
            readings = repair_candidates(cells[position], config)
            again = new_reading(cells, index, position, config, reread)
            readings = [("re-read", again), *readings] if again else readings
            seen: set[str | None] = set()  # one option per value: a re-read and a rule may agree
            for rule, text in readings:
                value = clean_number(text, config)
                if value not in seen:
                    seen.add(value)
                    options.append((k, position, rule, text))
    if len(options) > limit:
        return []
    return [
        (a, b) for a, b in itertools.combinations(options, 2)
        if a[:2] != b[:2] and edits_fit((a, b), stretch, members, raw_rows, values, orientation, config)
    ]


def edits_fit(
    edits: tuple[tuple[int, int, str, str], ...],
    stretch: list[int],
    members: list[tuple[int, str]],
    raw_rows: list[RawRow],
    values: list[tuple[Decimal | None, Decimal | None]],
    orientation: tuple[int, bool],
    config: SimpleNamespace,
) -> bool:
    """Whether the rows, with every edit (chain position, cell, rule, text) made, are
    transactions and every link of the stretch holds: one edit, or a pair."""
    edited: dict[int, list[str]] = {}
    for k, position, _rule, text in edits:
        cells = edited.setdefault(k, list(raw_rows[members[k][0]][0]))
        cells[position] = text
    if not all(is_transaction(row_values(cells, config), cells, config) for cells in edited.values()):
        return False
    trial = list(values)
    for k, cells in edited.items():
        trial[k] = chain_values(cells, config)
    return stretch_fits(stretch, trial, orientation)


def repair_rows(
    raw_rows: list[RawRow], config: SimpleNamespace, reread: Any = None
) -> tuple[list[RawRow], list[dict[str, Any]]]:
    """The raw rows with each uniquely fitting repair applied, and the repairs made.

    A repair is ``{"row", "column", "before", "after", "rule"}``: the transaction's position
    in the parser's frame, the header label of the cell, its text as read and as repaired.
    ``reread(raw row, position)``: the cell read again (see :func:`stretch_repairs`).
    """
    if getattr(config, "balance_index", None) is None or not config.amounts:
        return raw_rows, []
    members = chain_members(raw_rows, config)
    values = [chain_values(raw_rows[i][0], config) for i, _part in members]
    orientation = chain_orientation(values)
    if orientation is None:
        return raw_rows, []
    rows = list(raw_rows)
    edits: list[tuple[int, int, str, str]] = []
    for stretch in broken_stretches(values, orientation):
        fits = stretch_repairs(stretch, members, raw_rows, values, orientation, config, reread)
        if len(fits) == 1:
            edits.append(fits[0])
        elif not fits:
            pairs = pair_repairs(stretch, members, raw_rows, values, orientation, config, reread)
            edits += list(pairs[0]) if len(pairs) == 1 else []
    for k, position, _rule, text in edits:
        index = members[k][0]
        cells = [text if i == position else cell for i, cell in enumerate(rows[index][0])]
        rows[index] = (cells, rows[index][1])
    return rows, [
        repair_record(rows, members[k][0], raw_rows[members[k][0]][0][p], p, rule, text, config)
        for k, p, rule, text in edits
    ]


def repair_record(
    rows: list[RawRow],
    index: int,
    before: str,
    position: int,
    rule: str,
    text: str,
    config: SimpleNamespace,
) -> dict[str, Any]:
    """What one repair changed, with the row's position among the frame's rows."""
    row = sum(
        1
        for cells, _gap in rows[:index]
        if is_transaction(row_values(cells, config), cells, config)
    )
    return {
        "row": row,
        "column": config.header_labels[position],
        "before": before,
        "after": text,
        "rule": rule,
    }


def report_repairs(repairs: list[dict[str, Any]]) -> None:
    """Tell the controller what was repaired: one marked JSON line per repair on stderr."""
    # lazy: each function is copied alone into generated parsers, so it imports what it uses
    import json
    import sys

    for repair in repairs:
        print("sandloop-repair " + json.dumps(repair, ensure_ascii=True), file=sys.stderr)
