"""``make eval-intake`` (second half): every reply of the corpus, then per class the passes, wrong facts, misses.

    python -m tests.intake_replies [--verbose] [--words]

Prints each case that did not pass (what was stored wrong, what was missed), a table per class,
and ends with ``N passed, M failed``. Exit 0 once the corpus ran (its rates are the result).
"""

from __future__ import annotations

import sys
import time

from controller.platform.observability.logs import configure_logging
from tests.intake_replies import load, rates, run_all


def main(argv: list[str]) -> int:
    """Run the corpus and print its rates."""
    configure_logging("console", "warning", stream=sys.stderr)
    started = time.monotonic()
    outcomes = run_all(load())
    for outcome in outcomes:
        if not outcome.passed or "--verbose" in argv:
            status = "passed" if outcome.passed else "WRONG " if outcome.wrong else "missed"
            print(f"{status} {outcome.case.id}: {outcome.case.reply[:70]!r} -> "
                  f"{'; '.join(outcome.wrong + outcome.missed)[:200]}"
                  + (f" (asked: {', '.join(outcome.asked)})" if outcome.asked else ""))
        if "--words" in argv:
            for name, words in outcome.words.items():
                print(f"    {outcome.case.id} {name} read from {words!r}")
    print(f"{'class':<40} passed         wrong  missed")
    table = rates(outcomes)
    for klass, rate in table.items():
        print(f"{klass[:40]:<40} {rate.passed:>3}/{rate.cases:<3} {rate.rate:5.0%} {rate.wrong:>6} {rate.missed:>7}")
    passed = sum(o.passed for o in outcomes)
    wrong = sum(r.wrong for r in table.values())
    print(f"{len(outcomes)} replies in {len(table)} classes in {time.monotonic() - started:.1f} s; "
          f"{wrong} wrong fact(s) stored")
    print(f"{passed} passed, {len(outcomes) - passed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
