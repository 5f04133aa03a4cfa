"""Targeted repairs of an Idris module from ``idris2 --check`` diagnostics (seed 004, node 5).

Each rule reads one diagnostic and, when it applies to *this* module, edits the source:

===========================  ==========================================================
category                     repair
===========================  ==========================================================
missing_import               ``Module X not found``: correct a known misspelling of X,
                             else drop the ``import X`` line
missing_implementation       ``Can't find an implementation for Show (Vect …)``: import
                             the module that defines the type (or the interface)
undefined_name               a name a known module exports (``So``, ``isLTE``, ``Vect`` …)
                             gets its import; ``Did you mean: y?`` renames the name to y
ambiguous_elaboration        the name at the error is qualified with the first of the
                             "Possible results"
unification                  a numeric mismatch (``Nat`` vs ``Integer`` …) at the error
                             gets a ``cast``
===========================  ==========================================================

Rules that need the error's location act only when the location is in this module (Idris2
names it by module, e.g. ``Domains.X:12:5--12:9``). What a rule cannot fix is left to the
coder's next style (see :mod:`agents.idris.coder`). Nothing here runs Idris code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.idris.diagnostics import Category, Diagnostic

#: Where a name lives, for names the Prelude does not export.
NAME_HOMES = {
    **dict.fromkeys(("So", "Oh", "choose", "eqToSo", "soToEq", "andSo", "soAnd"), "Data.So"),
    **dict.fromkeys(("LTE", "LTEZero", "LTESucc", "isLTE", "lte", "lteReflectsLTE", "GTE", "LT", "GT",
                     "NonZero", "minus", "lteSuccRight"), "Data.Nat"),
    **dict.fromkeys(("Vect", "index", "replicate"), "Data.Vect"),
    **dict.fromkeys(("Fin", "FZ", "FS", "finToNat", "natToFin"), "Data.Fin"),
    **dict.fromkeys(("isJust", "isNothing", "fromMaybe", "fromJust", "IsJust", "catMaybes", "mapMaybe"),
                    "Data.Maybe"),
    **dict.fromkeys(("DecEq", "decEq"), "Decidable.Equality"),
    **dict.fromkeys(("Subset", "Element"), "Data.DPair"),
    **dict.fromkeys(("List1", "forget"), "Data.List1"),
    **dict.fromkeys(("sort", "sortBy", "nub", "isPrefixOf", "isSuffixOf", "isInfixOf"), "Data.List"),
    **dict.fromkeys(("trim", "split", "toUpper", "toLower", "padLeft", "strIndex"), "Data.String"),
    **dict.fromkeys(("SortedMap",), "Data.SortedMap"),
}
#: Where a type or interface lives, for "Can't find an implementation for I T".
TYPE_HOMES = {
    "Vect": "Data.Vect", "Fin": "Data.Fin", "So": "Data.So", "LTE": "Data.Nat", "Nat": "Data.Nat",
    "List1": "Data.List1", "SortedMap": "Data.SortedMap", "DecEq": "Decidable.Equality",
    "Subset": "Data.DPair", "Elem": "Data.List.Elem",
}
#: Known misspellings of standard modules.
MODULE_CORRECTIONS = {
    "Data.Nats": "Data.Nat", "Data.Strings": "Data.String", "Data.Lists": "Data.List",
    "Data.Vects": "Data.Vect", "Data.Maybes": "Data.Maybe", "Decidable.Equalities": "Decidable.Equality",
    "Data.Sos": "Data.So", "Data.Bools": "Data.Bool",
}
NUMERIC_TYPES = frozenset(("Nat", "Integer", "Int", "Double", "Bits8", "Bits16", "Bits32", "Bits64",
                           "Int8", "Int16", "Int32", "Int64"))

_NOT_FOUND = re.compile(r"^Module (?P<module>[\w.]+) not found")
_NO_IMPL = re.compile(r"Can't find an implementation for (?P<iface>[\w.]+)\s+\(?(?P<type>[\w.]+)")
_UNDEFINED = re.compile(r"(?:Undefined name|No such variable|No type declaration for) (?P<name>\S+?)\.?\s*$", re.M)
_SUGGEST = re.compile(r"^Did you mean: (?P<name>[^,\s]+?)\?$", re.M)
_MISMATCH = re.compile(r"Mismatch between: (?P<a>[\w.]+) and (?P<b>[\w.]+)\.")
_IMPORT = re.compile(r"^import[ \t]+(?:public[ \t]+)?(?P<module>[\w.]+)[ \t]*$", re.M)


@dataclass(frozen=True)
class Repair:
    """A repaired source, what was changed, and the imports it added (to keep on a restart)."""

    code: str
    notes: tuple[str, ...]
    added_imports: tuple[str, ...]


Rule = Callable[[str, str, Diagnostic], tuple[str, str, tuple[str, ...]] | None]


def repair(code: str, module: str, diagnostics: Sequence[Diagnostic]) -> Repair | None:
    """Apply every rule that fits one of ``diagnostics``; None when none changed anything."""
    notes: list[str] = []
    added: list[str] = []
    for diagnostic in diagnostics:
        if diagnostic.severity != "error":
            continue
        rule = RULES.get(diagnostic.category)
        result = rule(code, module, diagnostic) if rule else None
        if result is not None and result[0] != code:
            code, note, imports = result
            notes.append(f"{note} ({diagnostic.one_line()})")
            added.extend(imports)
    return Repair(code, tuple(notes), tuple(added)) if notes else None


def imports_of(code: str) -> list[str]:
    """The modules ``code`` imports."""
    return [m["module"] for m in _IMPORT.finditer(code)]


def add_import(code: str, module: str) -> str:
    """``code`` with ``import module`` after its last import (or after the module line)."""
    if module in imports_of(code):
        return code
    lines = code.split("\n")
    anchor = max((i for i, line in enumerate(lines) if _IMPORT.match(line)), default=None)
    if anchor is None:
        anchor = next((i for i, line in enumerate(lines) if line.startswith("module ")), -1)
        lines.insert(anchor + 1, "")
        anchor += 1
    lines.insert(anchor + 1, f"import {module}")
    return "\n".join(lines)


def _missing_module(code: str, module: str, d: Diagnostic) -> tuple[str, str, tuple[str, ...]] | None:
    match = _NOT_FOUND.search(d.message)
    if match is None or match["module"] not in imports_of(code):
        return None
    wrong = match["module"]
    pattern = re.compile(rf"^import[ \t]+(public[ \t]+)?{re.escape(wrong)}[ \t]*$\n?", re.M)
    right = MODULE_CORRECTIONS.get(wrong)
    if right:
        return pattern.sub(lambda m: f"import {m.group(1) or ''}{right}\n", code), \
            f"replaced import {wrong} with {right}", (right,)
    return pattern.sub("", code), f"removed import {wrong}, a module that does not exist", ()


def _missing_implementation(code: str, module: str, d: Diagnostic) -> tuple[str, str, tuple[str, ...]] | None:
    match = _NO_IMPL.search(d.message)
    if match is None:
        return None
    for name in (match["type"], match["iface"]):
        home = TYPE_HOMES.get(name.split(".")[-1])
        if home and home not in imports_of(code):
            return add_import(code, home), f"imported {home} for {name}", (home,)
    return None


def _undefined_name(code: str, module: str, d: Diagnostic) -> tuple[str, str, tuple[str, ...]] | None:
    match = _UNDEFINED.search(d.message)
    if match is None:
        return None
    name = match["name"].split(".")[-1]
    home = NAME_HOMES.get(name)
    if home and home not in imports_of(code):
        return add_import(code, home), f"imported {home}, which defines {name}", (home,)
    suggestion = _SUGGEST.search(d.notes)
    if suggestion and _is_identifier(name) and _occurs(code, name):
        better = suggestion["name"].split(".")[-1]
        return _rename(code, name, better), f"renamed {name} to {better}, as Idris2 suggested", ()
    return None


def _ambiguous(code: str, module: str, d: Diagnostic) -> tuple[str, str, tuple[str, ...]] | None:
    text = _span_text(code, module, d)
    heads = _possible_results(d.message)
    if text is None or not heads or not _is_identifier(text):
        return None
    chosen = next((h for h in heads if h.split(".")[-1] == text), None)
    if chosen is None:
        return None
    return _replace_span(code, d, chosen), f"qualified {text} as {chosen}", ()


def _possible_results(message: str) -> list[str]:
    """The heads of the indented lines after ``Possible results:`` (line by line, no backtracking)."""
    lines = message.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith("Possible results:")), None)
    if start is None:
        return []
    heads = []
    for line in lines[start + 1:]:
        if not line[:1].isspace() or not line.strip():
            break
        heads.append(line.split()[0])
    return heads


def _unification(code: str, module: str, d: Diagnostic) -> tuple[str, str, tuple[str, ...]] | None:
    mismatch = _MISMATCH.search(d.message)
    text = _span_text(code, module, d)
    if mismatch is None or text is None or not {mismatch["a"], mismatch["b"]} <= NUMERIC_TYPES:
        return None
    if text.startswith("(cast "):
        return None
    return _replace_span(code, d, f"(cast {text})"), \
        f"inserted cast for {mismatch['a']} vs {mismatch['b']}", ()


RULES: dict[Category, Rule] = {
    Category.MISSING_IMPORT: _missing_module,
    Category.MISSING_IMPLEMENTATION: _missing_implementation,
    Category.UNDEFINED_NAME: _undefined_name,
    Category.AMBIGUOUS: _ambiguous,
    Category.UNIFICATION: _unification,
}


def in_module(d: Diagnostic, module: str) -> bool:
    """Whether the diagnostic's location is in ``module`` (Idris2 prints the module name)."""
    if d.file is None:
        return False
    path = module.replace(".", "/") + ".idr"
    return d.file in (module, path) or d.file.endswith("/" + path)


def _span_text(code: str, module: str, d: Diagnostic) -> str | None:
    """The source text the diagnostic points at, for a one-line span in this module."""
    if d.span is None or not in_module(d, module) or d.span.start_line != d.span.end_line:
        return None
    lines = code.split("\n")
    if not 1 <= d.span.start_line <= len(lines):
        return None
    line = lines[d.span.start_line - 1]
    text = line[d.span.start_col - 1:d.span.end_col - 1]
    return text or None


def _replace_span(code: str, d: Diagnostic, new: str) -> str:
    assert d.span is not None
    lines = code.split("\n")
    line = lines[d.span.start_line - 1]
    lines[d.span.start_line - 1] = line[:d.span.start_col - 1] + new + line[d.span.end_col - 1:]
    return "\n".join(lines)


def _is_identifier(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][\w']*", text) is not None


def _occurs(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w.']){re.escape(name)}(?![\w'])", code) is not None


def _rename(code: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.']){re.escape(old)}(?![\w'])", new, code)
