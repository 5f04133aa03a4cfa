"""Repair of OCR-confused words from the statement's own text (issue 46).

A scan's parser carries these functions (copied like :mod:`._repair_runtime`'s), and the host
imports them for its preview and to confirm what a parser says it repaired. Rules: standard
library only, no module-level state, every setting through ``config``; rows are the raw rows
of :mod:`._runtime` (cell texts in header order).

OCR reads a name right on one line and wrong on another: "P lyer" for "P Iyer", "UP]" for
"UPI", "Femandes" for "Fernandes", "QuickF uel S tation" for "QuickFuel Station", "From]
Fernandes" for "From J Fernandes". In the text cells of the rows the parser keeps, a word (or
two neighbouring words, or one word against a pair) that *reads alike* another one written
elsewhere in the same statement, more often, is replaced by it (rule ``word``):

* *reads alike*: equal once ``rn`` is read as ``m``, character by character, where the only
  differences are the confusions I/l/1/|/], J/], O/0 and S/$ (:func:`reads_alike`);
* a word may carry one stray mark at either end (``]``, ``|``, ``[``, ``$``: a speck or a rule
  beside it), dropped when it is compared (:func:`bare`): "UPI]" is "UPI", "S$ tation" is
  "Station";
* **substitute**: a word of at least two characters, with a letter (or a lone mark such as
  "]", never a word itself), becomes the word it reads alike that the statement has more often;
* **merge**: two neighbouring words, one of them found nowhere else, become the one word their
  concatenation reads alike, when the statement has it more often than this pair;
* **split**: a word becomes the pair of words its text reads alike ("From]" -> "From J"), when
  the statement has that pair more often than this word.

Among the replacements a word may take, only one with the strictly highest count is applied;
a tie leaves the word as read. Every replacement is a word (or pair) the statement holds: no
word is ever invented. The cost is linear in the number of words (lookups by a coarse key;
each lookup considers at most ``limit`` candidates).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

# Copied parsers carry these functions too; the host imports them from their module.
from agents.bank_parser.coders._runtime import is_continuation, is_transaction, row_values

RawRow = tuple[list[str], float]


def confusion_key(token: str) -> str:
    """A coarse key equal for every two tokens that may read alike (and for a few that do not)."""
    return token.replace("rn", "m").translate(str.maketrans("Il|]JO$", "111110S"))


def reads_alike(first: str, second: str) -> bool:
    """Whether two tokens are one text read with OCR's confusions: ``rn`` for ``m``, and
    character by character I/l/1/|/], J/], O/0 and S/$."""
    groups = ("Il1|]", "J]", "O0", "S$")
    a, b = first.replace("rn", "m"), second.replace("rn", "m")
    if len(a) != len(b):
        return False
    return all(x == y or any(x in g and y in g for g in groups) for x, y in zip(a, b, strict=True))


def bare(token: str) -> str:
    """The token without one stray mark at either end ("UPI]" -> "UPI", "S$" -> "S": a speck or
    a rule beside a word), when a letter is left; else the token."""
    core = token[1:] if token[:1] in "[]|$" else token
    core = core[:-1] if core[-1:] in "[]|$" else core
    return core if core != token and any(c.isalpha() for c in core) else token


def text_positions(config: SimpleNamespace) -> list[int]:
    """Header positions of the cells holding text (a description, a name), not figures or dates."""
    return sorted({source for source, kind in config.columns.values() if isinstance(source, int) and kind == "text"})


def kept_rows(raw_rows: list[RawRow], config: SimpleNamespace) -> list[tuple[int, int]]:
    """(raw row, frame row) of the rows the parser keeps: transactions and the lines continuing
    them (as :func:`collect_rows` joins them)."""
    kept: list[tuple[int, int]] = []
    count, chained = 0, False
    for index, (cells, gap) in enumerate(raw_rows):
        values = row_values(cells, config)
        if is_transaction(values, cells, config):
            kept.append((index, count))
            count, chained = count + 1, True
        elif chained and is_continuation(values, gap, config):
            kept.append((index, count - 1))
        else:
            chained = False
    return kept


def word_counts(cells: list[list[str]]) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """How often each word, and each pair of neighbouring words, occurs in the cells."""
    words: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for tokens in cells:
        for i, token in enumerate(tokens):
            words[token] = words.get(token, 0) + 1
            if i + 1 < len(tokens):
                pairs[(token, tokens[i + 1])] = pairs.get((token, tokens[i + 1]), 0) + 1
    return words, pairs


def keyed(items: Any, text: Any) -> dict[str, list[Any]]:
    """The items grouped by the confusion key of ``text(item)``, in a fixed (sorted) order."""
    groups: dict[str, list[Any]] = {}
    for item in sorted(items):
        groups.setdefault(confusion_key(text(item)), []).append(item)
    return groups


def best_of(options: list[tuple[int, list[str]]]) -> list[str] | None:
    """The replacement with the strictly highest count; None when there is none or a tie."""
    if not options:
        return None
    top = max(count for count, _ in options)
    winners = [tokens for count, tokens in options if count == top]
    return winners[0] if len(winners) == 1 else None


def word_options(
    tokens: list[str], i: int, counts: tuple[dict[str, int], dict[tuple[str, str], int]],
    index: tuple[dict[str, list[Any]], dict[str, list[Any]]], limit: int = 20,
) -> tuple[int, list[str] | None]:
    """How many tokens from ``i`` on to replace, and by what (None: keep token ``i``)."""
    words, pairs = counts
    by_word, by_pair = index
    token = tokens[i]
    if i + 1 < len(tokens):
        joined, pair = bare(token) + bare(tokens[i + 1]), (token, tokens[i + 1])
        lone = min(words[token], words[tokens[i + 1]]) == pairs[pair]  # a fragment found nowhere else
        merged = [(words[w], [w]) for w in by_word.get(confusion_key(joined), [])[:limit]
                  if lone and words[w] > pairs[pair] and reads_alike(w, joined)]
        if (choice := best_of(merged)) is not None:
            return 2, choice
    split = [(pairs[p], list(p)) for p in by_pair.get(confusion_key(token), [])[:limit]
             if pairs[p] > words[token] and reads_alike(p[0] + p[1], token)]
    if (choice := best_of(split)) is not None:
        return 1, choice
    lone_mark = len(token) == 1 and not token.isalnum()  # "]" alone is no word: a J or an I read badly
    if not lone_mark and (len(token) < 2 or not any(c.isalpha() for c in token)):
        return 1, None
    forms = sorted({token, bare(token)})  # as read, and without a stray mark ("UP]" is both)
    near = {w for form in forms for w in by_word.get(confusion_key(form), [])[:limit]}
    same = [(words[w], [w]) for w in sorted(near)
            if w != token and words[w] > words[token] and (w.isalpha() if lone_mark else any(c.isalpha() for c in w))
            and any(reads_alike(w, form) for form in forms)]
    return 1, best_of(same)


def fix_words(
    tokens: list[str], counts: tuple[dict[str, int], dict[tuple[str, str], int]],
    index: tuple[dict[str, list[Any]], dict[str, list[Any]]],
) -> tuple[list[str], list[tuple[str, str]]]:
    """The cell's tokens with each replacement made, and (before, after) for each."""
    fixed: list[str] = []
    changes: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        taken, replacement = word_options(tokens, i, counts, index)
        if replacement is None:
            fixed.append(tokens[i])
        else:
            fixed += replacement
            changes.append((" ".join(tokens[i:i + taken]), " ".join(replacement)))
        i += taken
    return fixed, changes


def repair_words(raw_rows: list[RawRow], config: SimpleNamespace) -> tuple[list[RawRow], list[dict[str, Any]]]:
    """The raw rows with OCR-confused words replaced by the statement's own, and the
    replacements made (``{"row", "column", "before", "after", "rule": "word"}``, like
    :func:`repair_rows`'s)."""
    positions = text_positions(config)
    kept = kept_rows(raw_rows, config)
    cells = [raw_rows[i][0][p].split() for i, _row in kept for p in positions]
    counts = word_counts(cells)
    index = (keyed(counts[0], lambda w: w), keyed(counts[1], lambda p: p[0] + p[1]))
    rows = list(raw_rows)
    made: list[dict[str, Any]] = []
    for i, row in kept:
        texts = list(rows[i][0])
        for p in positions:
            fixed, changes = fix_words(texts[p].split(), counts, index)
            if changes:
                texts[p] = " ".join(fixed)
                made += [{"row": row, "column": config.header_labels[p], "before": before, "after": after,
                          "rule": "word"} for before, after in changes]
        rows[i] = (texts, rows[i][1])
    return rows, made
