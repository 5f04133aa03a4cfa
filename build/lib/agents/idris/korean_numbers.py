"""Korean amounts written in words (``금 오천이백팔십만원정``), read as integers.

Korean contracts state the total twice, in digits and in words, so that neither can be
altered alone; the analysis checks that both say the same. Handles Sino-Korean digits
(일…구, 영/공), the small units 십/백/천 and the large units 만/억/조, and Arabic digits mixed
in (``5천2백만``).
"""

from __future__ import annotations

import re

_DIGITS = {"영": 0, "공": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SMALL = {"십": 10, "백": 100, "천": 1000}
_LARGE = {"만": 10**4, "억": 10**8, "조": 10**12}
_WORDS = re.compile(r"금\s*(?P<words>[0-9영공일이삼사오육칠팔구십백천만억조\s]+?)\s*원(?:정|整)?")


def parse_korean_number(words: str) -> int | None:
    """The value of ``words`` (e.g. ``오천이백팔십만`` → 52800000); None if it is not a number."""
    text = words.replace(" ", "")
    if not text:
        return None
    total = section = digit = 0
    seen_digit = False
    index = 0
    while index < len(text):
        char = text[index]
        if char.isdigit():
            run = re.match(r"\d+", text[index:])
            assert run is not None
            digit, seen_digit = int(run.group()), True
            index += len(run.group())
            continue
        if char in _DIGITS:
            digit, seen_digit = _DIGITS[char], True
        elif char in _SMALL:
            section += (digit if seen_digit else 1) * _SMALL[char]
            digit, seen_digit = 0, False
        elif char in _LARGE:
            section += digit
            total += (section or 1) * _LARGE[char]
            section = digit = 0
            seen_digit = False
        else:
            return None
        index += 1
    return total + section + digit


def amount_in_words(text: str) -> tuple[str, int] | None:
    """The first ``금 …원(정)`` phrase in ``text``: its words and their value."""
    match = _WORDS.search(text)
    if match is None:
        return None
    value = parse_korean_number(match["words"])
    return None if value is None else (match.group(0).strip(), value)
