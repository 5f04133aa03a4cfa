"""How long the intake resolver takes to read a long hostile reply (issue 40: 2,000 characters under 50 ms).

    python -m tools.bench_intake_reply

Reads a 2,000-character reply of mixed values (amounts, fractions, units, dates, corrections)
for a few questions, once to warm the libraries' caches (pint's registry, dateparser's), then
20 times each; prints the median and the worst. Not a timed test: the machine is shared.
"""

from __future__ import annotations

import datetime
import statistics
import time

from agents.intake.catalogue import shipped
from agents.intake.models import Question
from agents.intake.resolver import ResolverInput, resolve

_PIECE = ("I'm about 68 kilos, sorry I meant 72, rent is one and a half thousand a month, "
          "from the 3rd of March 2027 it goes up to 2,500; 5'7\" and two and a half years. ")
REPLY = (_PIECE * 40)[:2000]


def main() -> None:
    """Print the median and worst read time per question."""
    schemas = shipped()
    today = datetime.date(2026, 6, 15)
    for node, name in (("Expenses", "monthly_amount"), ("Personal", "age"), ("Goals", "target_year")):
        inp = ResolverInput(REPLY, Question(node, name, "?"), schemas, {}, today)
        resolve(inp)
        times = []
        for _ in range(20):
            started = time.process_time()
            resolve(inp)
            times.append((time.process_time() - started) * 1000)
        print(f"{node}.{name}: a {len(REPLY)}-character reply read in {statistics.median(times):.1f} ms "
              f"(worst {max(times):.1f} ms of 20)")


if __name__ == "__main__":
    main()
