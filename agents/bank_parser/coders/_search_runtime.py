"""A running-balance break becomes a search for the row OCR lost (issue 46).

A scan's parser carries these functions (copied like :mod:`._repair_runtime`'s), and the host
imports them for its preview. Rules: standard library only, no module-level state, every
setting through ``config``; rows are the raw rows of :mod:`._runtime` (cell texts in header
order).

When two rows of the balance chain still disagree once :func:`repair_rows` has mended what it
could, the amount missing between them is known: the later balance less the later row's amount
is the balance of the row that is missing, and that less the earlier balance is its amount.
The OCR lines between the two rows that the parser did not take as rows (a date read
"25 Sep 2024." or "41/01/24", an amount read "62,7A4.39") are each read again as a row: as
read, with its date cells' stray marks at either end taken off (and a date that still reads as
none given the one date a character away that falls between the dates of the rows around it:
"41/01/24" between 10/01/24 and 13/01/24 is 11/01/24), and with each amount
or balance cell read again alone (``reread``, in a scan's parser) or offered its candidate
readings (:func:`repair_candidates`). A reading is taken only when it is a transaction and it
closes the balance *exactly* on both sides: the earlier row's balance plus its amount is its
balance, and its balance plus the later row's amount is the later row's balance. Readings of
two different lines that both close the balance leave the break as it is: nothing is taken
that the balance does not single out. A break between the last row and nothing (no closing
balance after it) cannot be closed, so a line after it is never taken.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

# Copied parsers carry these functions too; the host imports them from their module.
from agents.bank_parser.coders._repair_runtime import (
    amount_positions,
    chain_members,
    chain_orientation,
    chain_values,
    link_holds,
    repair_candidates,
)
from agents.bank_parser.coders._runtime import is_transaction, row_values, tidy

RawRow = tuple[list[str], float]


def date_positions(config: SimpleNamespace) -> list[int]:
    """Header positions of the cells holding a date."""
    return sorted({source for source, kind in config.columns.values() if isinstance(source, int) and kind == "date"})


def line_readings(
    cells: list[str], index: int, config: SimpleNamespace, reread: Any = None, bounds: Any = (None, None),
    limit: int = 40,
) -> list[tuple[str, list[str]]]:
    """(rule, cells) for each way of reading a line as a row, fewest changes first: as read,
    its dates without stray marks at either end (or, where a date still reads as none, the one
    date a single character away that falls between ``bounds``, the dates of the rows around
    it), then each amount or balance cell read again alone (``reread``) or offered its
    candidate readings; at most ``limit``."""
    import re  # lazy: each function is copied alone into generated parsers

    bases = [("as read", list(cells))]
    trimmed = list(cells)
    for position in date_positions(config):
        text = re.sub(r"^[^\w(]+|[^\w)]+$", "", tidy(cells[position]))
        near = date_between(text, bounds, config.date_formats[date_column(position, config)][0])
        trimmed[position] = near or text
    if trimmed != list(cells):
        bases.append(("date", trimmed))
    found = list(bases)
    for rule, base in bases:
        for position in amount_positions(config):
            again = reread(index, position) if reread is not None and base[position].strip() else None
            options = [("re-read", again)] if again else []
            for option, text in [*options, *repair_candidates(base[position], config)]:
                edited = [text if p == position else cell for p, cell in enumerate(base)]
                found.append((option if rule == "as read" else f"{rule}, {option}", edited))
    return found[:limit]


def date_column(position: int, config: SimpleNamespace) -> str:
    """The output column a date cell fills."""
    return str(next(name for name, (source, kind) in config.columns.items() if source == position and kind == "date"))


def parsed_date(text: str, pdf_format: str) -> Any:
    """The date ``text`` reads as in ``pdf_format``, or None."""
    try:
        return datetime.strptime(tidy(text), pdf_format)
    except ValueError:
        return None


def date_between(text: str, bounds: Any, pdf_format: str) -> str | None:
    """For a date cell that reads as no date ("41/01/24"), the only text one character away
    that is a date between ``bounds`` (earliest, latest); None when there is none, or several,
    or the cell is a date already."""
    if not text or parsed_date(text, pdf_format) is not None or None in bounds:
        return None
    near = {text[:i] + digit + text[i + 1:] for i in range(len(text)) for digit in "0123456789"}
    fits = sorted(t for t in near if (d := parsed_date(t, pdf_format)) is not None and bounds[0] <= d <= bounds[1])
    return fits[0] if len(fits) == 1 else None


def gap_bounds(cells: tuple[list[str], list[str]], config: SimpleNamespace) -> Any:
    """(earliest, latest) of the dates of the two rows around a gap (first date column), or
    (None, None) when either reads as no date."""
    positions = date_positions(config)
    if not positions:
        return (None, None)
    pdf_format = config.date_formats[date_column(positions[0], config)][0]
    dates = [parsed_date(row[positions[0]], pdf_format) for row in cells]
    return (None, None) if None in dates else (min(dates), max(dates))


def closes(
    cells: list[str], upper: tuple[Decimal | None, Decimal | None],
    lower: tuple[Decimal | None, Decimal | None], orientation: tuple[int, bool], config: SimpleNamespace,
) -> bool:
    """Whether ``cells``, read as a row between ``upper`` and ``lower``, is a transaction that
    closes the balance on both sides."""
    if not is_transaction(row_values(cells, config), cells, config):
        return False
    values = chain_values(cells, config)
    return (values[0] not in (None, 0) and link_holds(upper, values, orientation)
            and link_holds(values, lower, orientation))


def gap_finds(
    lines: list[int], raw_rows: list[RawRow], ends: tuple[Any, Any, Any], orientation: tuple[int, bool],
    config: SimpleNamespace, reread: Any = None,
) -> list[tuple[int, list[str]]]:
    """(raw row, cells) of the first reading of each line of a gap that closes it; ``ends``:
    the chain values of the rows around the gap, and the bounds of their dates."""
    finds: list[tuple[int, list[str]]] = []
    for index in lines:
        for _rule, cells in line_readings(raw_rows[index][0], index, config, reread, ends[2]):
            if closes(cells, ends[0], ends[1], orientation, config):
                finds.append((index, cells))
                break
    return finds


def broken_links(raw_rows: list[RawRow], config: SimpleNamespace) -> tuple[list[tuple[int, int, Any]], set[int], Any]:
    """The balance chain's links that do not hold, as (upper raw row, lower raw row, ends: the
    chain values of both and the bounds of their dates); the raw rows the chain runs through;
    and its orientation (None: no chain to search by). The chain is the rows and anchors as
    read (:func:`chain_members`); a *tentative* row is a line to search like any other."""
    if getattr(config, "balance_index", None) is None or not config.amounts:
        return [], set(), None
    members = [(i, part) for i, part in chain_members(raw_rows, config) if part != "tentative"]
    values = [chain_values(raw_rows[i][0], config) for i, _part in members]
    orientation = chain_orientation(values)
    if orientation is None:
        return [], set(), None
    links = []
    for k in range(1, len(members)):
        if not link_holds(values[k - 1], values[k], orientation):
            around = (raw_rows[members[k - 1][0]][0], raw_rows[members[k][0]][0])
            links.append((members[k - 1][0], members[k][0], (values[k - 1], values[k], gap_bounds(around, config))))
    return links, {index for index, _part in members}, orientation


def find_lost_rows(
    raw_rows: list[RawRow], config: SimpleNamespace, reread: Any = None, max_lines: int = 12,
) -> tuple[list[RawRow], list[dict[str, Any]]]:
    """The raw rows with each lost row read again where it alone closes a balance break, and
    the rows found (``{"row", "column": "(row)", "before", "after", "rule": "row found"}``).

    ``reread(raw row, position)``: a cell read again alone (an OCR parser's ``cell_reader``).
    A gap of more than ``max_lines`` lines between two rows is not searched (a page's worth of
    lines read badly is no lost row)."""
    links, taken, orientation = broken_links(raw_rows, config)
    rows = list(raw_rows)
    found: list[tuple[int, list[str]]] = []
    for upper, lower, ends in links:
        lines = [i for i in range(upper + 1, lower) if i not in taken and raw_rows[i][0]]
        finds = gap_finds(lines[:max_lines], raw_rows, ends, orientation, config, reread)
        found += finds if len(finds) == 1 else []
    for index, cells in found:
        rows[index] = (cells, rows[index][1])
    places = frame_places(rows, config) if found else {}
    return rows, [found_record(rows, raw_rows[index][0], index, places[index]) for index, _cells in found]


def find_unread_rows(raw_rows: list[RawRow], config: SimpleNamespace,
                     band: Any) -> tuple[list[RawRow], list[dict[str, Any]]]:
    """Where the balance still breaks, the band of the page between the two rows read again
    (``band(upper raw row, lower raw row)``: its lines as cells, an OCR parser's
    ``band_reader``; a line OCR did not read at all the first time); a line of it that alone
    closes the break is added as a row, below the upper one. Returns the raw rows and the rows
    found, as :func:`find_lost_rows` does."""
    links, _taken, orientation = broken_links(raw_rows, config)
    added: list[tuple[int, list[str], list[str]]] = []
    for upper, lower, ends in links:
        lines = [(cells, 0.0) for cells in band(upper, lower)]
        finds = gap_finds(list(range(len(lines))), lines, ends, orientation, config)
        added += [(upper, finds[0][1], ["(band read again)", *lines[finds[0][0]][0]])] if len(finds) == 1 else []
    added.sort(key=lambda item: item[0])
    rows = list(raw_rows)
    for upper, cells, _read in reversed(added):
        rows.insert(upper + 1, (cells, 0.0))
    inserted = [(upper + 1 + k, read) for k, (upper, _cells, read) in enumerate(added)]
    places = frame_places(rows, config) if added else {}
    return rows, [found_record(rows, read, index, places[index]) for index, read in inserted]


def frame_places(rows: list[RawRow], config: SimpleNamespace) -> dict[int, int]:
    """Raw row -> its position among the frame's rows, for the transactions (one pass)."""
    places: dict[int, int] = {}
    for index, (cells, _gap) in enumerate(rows):
        if is_transaction(row_values(cells, config), cells, config):
            places[index] = len(places)
    return places


def found_record(rows: list[RawRow], read: list[str], index: int, row: int) -> dict[str, Any]:
    """What one found row is: its position ``row`` among the frame's rows, the line as OCR read
    it (``read``: its cells) and the cells it was taken with."""
    before = " ".join(cell for cell in read if cell.strip())
    after = " | ".join(rows[index][0])
    return {"row": row, "column": "(row)", "before": before, "after": after, "rule": "row found"}


def renumber(repairs: list[dict[str, Any]], found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Repairs counted on the frame before rows were found, counted on the frame with them: a
    repaired row at or after a found row moves down by one for each."""
    moved = [dict(repair) for repair in repairs]
    for place in sorted(record["row"] for record in found):
        for repair in moved:
            repair["row"] += 1 if repair["row"] >= place else 0
    return moved
