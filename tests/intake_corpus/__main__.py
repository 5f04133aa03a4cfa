"""``make eval-intake``: every conversation of the corpus, then the pass rate per class.

    python -m tests.intake_corpus [--verbose]

Prints one line per conversation that failed (with what was wrong), a table of classes with
passed/total and the rate, and ends with ``N passed, M failed``. Exit 0 once the corpus ran
(its rates are the result), whatever they are.
"""

from __future__ import annotations

import sys
import time

from controller.platform.observability.logs import configure_logging
from tests.intake_corpus.corpus import load, rates, run


def main(argv: list[str]) -> int:
    """Run the corpus and print its rates."""
    configure_logging("console", "warning", stream=sys.stderr)
    started = time.monotonic()
    outcomes = [run(conversation) for conversation in load()]
    for outcome in outcomes:
        if not outcome.passed or "--verbose" in argv:
            status = "passed" if outcome.passed else "FAILED"
            print(f"{status} {outcome.conversation.id}: {'; '.join(outcome.problems)[:300]}")
    print(f"{'class':<45} passed  rate")
    for klass, (passed, total) in rates(outcomes).items():
        print(f"{klass:<45} {passed:>2}/{total:<3} {passed / total:6.0%}")
    passed = sum(o.passed for o in outcomes)
    print(f"{len(outcomes)} conversations in {time.monotonic() - started:.1f} s")
    print(f"{passed} passed, {len(outcomes) - passed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
