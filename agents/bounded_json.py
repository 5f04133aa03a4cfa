"""Parse untrusted JSON (bytes a sandbox returned) within bounds, before anything recurses.

``json.loads`` recurses once per nesting level, so a few megabytes of ``[[[[...`` raise
``RecursionError`` deep inside it; a document of ``[0,0,0,...`` turns 32 MiB into hundreds
of MiB of Python objects. :func:`loads_bounded` therefore first scans the bytes linearly,
with regular expressions and numpy only (no Python loop per byte): it blanks out string
literals, then measures the deepest bracket nesting and counts the values. Only a document
within every bound is handed to ``json.loads``. Every refusal is a :class:`BoundedJSONError`
with a one-line reason; nothing else escapes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

#: A complete JSON string literal (escapes included); unrolled so it never backtracks.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRUCTURE = b"[]{},"
_OTHER_BYTES = bytes(b for b in range(256) if b not in _STRUCTURE)
_CHUNK = 1 << 20


class BoundedJSONError(ValueError):
    """The document is not JSON, or it exceeds a bound (size, depth, values, key repeats)."""


@dataclass(frozen=True)
class JSONBounds:
    """What an untrusted document may be at most.

    Attributes:
        max_bytes: Size of the raw document.
        max_depth: Nesting of arrays and objects (the top-level container is depth 1).
        max_values: Array elements and object members in all (a bound on Python objects).
    """

    max_bytes: int
    max_depth: int
    max_values: int


def loads_bounded(raw: bytes, bounds: JSONBounds) -> Any:
    """Decode ``raw`` as UTF-8 JSON after checking it against ``bounds``.

    ``NaN`` and ``Infinity`` are accepted (Python's ``json`` writes them); an object with
    a repeated key is refused, since no honest writer produces one and readers disagree on
    which value wins.

    Raises:
        BoundedJSONError: anything wrong with the document, as one line.
    """
    if len(raw) > bounds.max_bytes:
        raise BoundedJSONError(f"{len(raw)} bytes, more than the {bounds.max_bytes} allowed")
    depth, values = structure_of(raw)
    if depth > bounds.max_depth:
        raise BoundedJSONError(f"nested {depth} levels deep; the format needs at most {bounds.max_depth}")
    if values > bounds.max_values:
        raise BoundedJSONError(f"holds about {values} values, more than the {bounds.max_values} allowed")
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as exc:
        raise BoundedJSONError(f"not UTF-8 (byte {exc.start})") from exc
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, int digit limit, repeated keys
        raise BoundedJSONError(f"not valid JSON: {_first_line(exc)}") from exc


def structure_of(raw: bytes) -> tuple[int, int]:
    """The deepest bracket nesting outside strings, and an upper bound on the values held.

    An unterminated string leaves its brackets counted: that can only overstate the depth of
    a document ``json`` would refuse anyway.
    """
    skeleton = _STRING.sub(b'""', raw).translate(None, _OTHER_BYTES)
    depth = deepest = containers = commas = 0
    for start in range(0, len(skeleton), _CHUNK):  # chunks: a few MiB of arrays, whatever the size
        codes = np.frombuffer(skeleton, dtype=np.uint8, count=min(_CHUNK, len(skeleton) - start), offset=start)
        opens, closes = (codes == ord("[")) | (codes == ord("{")), (codes == ord("]")) | (codes == ord("}"))
        running = np.cumsum(opens.astype(np.int32) - closes.astype(np.int32), dtype=np.int64) + depth
        deepest, depth = max(deepest, int(running.max())), int(running[-1])
        containers += int(np.count_nonzero(opens))
        commas += int(np.count_nonzero(codes == ord(",")))
    return deepest, commas + containers + 1


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"the key {repeated[:40]!r} appears more than once in an object")
    return document


def _first_line(exc: BaseException) -> str:
    # not agents.ports.errors.first_line: the environment images copy this file without agents/ports
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
